/**
 * The OpenAPI document must say exactly what the routes do: built from the same route table and
 * schema files, read by a JSON Schema 2020-12 validator (OpenAPI 3.1's dialect) it must accept and
 * refuse the same bodies and queries as the routes' own validators, and the committed copy under
 * docs/ must be the served document.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { adminBodyValidator, adminQueryValidator, type AdminApiDefinition } from '@eventrelay/config';
import { openApiDocument } from './openapi-document';
import { adminRoutes, type AdminDeps } from './routes/index';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking a JSON document
type Json = Record<string, any>;
const doc = openApiDocument() as Json;
const routes = adminRoutes(new Proxy({}, { get: () => () => undefined }) as AdminDeps);

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, coerceTypes: false });
// `components` is not a JSON Schema keyword: it only holds the schemas the references point into.
ajv.addVocabulary(['components']);
ajv.addSchema({ $id: 'openapi.json', components: doc['components'] });
const fromDocument = (name: string) => ajv.getSchema(`openapi.json#/components/schemas/${name}`)!;

const secret = { sharedSecret: 's3cret' };
const hook = (url: string, headers?: Record<string, string>) => (headers ? { url, headers } : { url });
const samples: Record<string, unknown[]> = {
  SourceCreate: [
    { name: 'App', type: 'web' },
    { id: 'app_1', name: 'A', type: 'server', rateLimitPerSecond: 5 },
    {},
    { name: '', type: 'web' },
    { name: 'A', type: 'tv' },
    { name: 'A', type: 'web', writeKey: 'x' },
    { id: 'bad id', name: 'A', type: 'web' },
    { name: 'A', type: 'web', rateLimitPerSecond: 0 },
    [],
    'text',
    null,
  ],
  SourcePatch: [
    { name: 'B' },
    { rateLimitPerSecond: null },
    { rateLimitPerSecond: 2 },
    {},
    { id: 'x' },
    { type: 'mobile', name: 'M' },
    { rateLimitPerSecond: 1.5 },
  ],
  DestinationCreate: [
    { name: 'Webhooks', settings: { webhooks: [hook('https://a.example')] } },
    {
      id: 'd1',
      name: 'Webhooks',
      enabled: true,
      sourceIds: ['s1', 's2'],
      settings: { webhooks: [hook('http://a', { 'X-A': 'b' })], ...secret },
    },
    { name: 'Other', settings: { webhooks: [hook('https://a')] } },
    { name: 'Webhooks', settings: { webhooks: [] } },
    { name: 'Webhooks', settings: { webhooks: Array.from({ length: 6 }, () => hook('https://a')) } },
    { name: 'Webhooks', settings: { webhooks: [hook('ftp://a')] } },
    { name: 'Webhooks', settings: { webhooks: [{ url: 'https://a', headers: { A: 1 } }] } },
    { name: 'Webhooks', sourceIds: ['a', 'a'], settings: { webhooks: [hook('https://a')] } },
    { name: 'Webhooks', settings: { webhooks: [hook('https://a')], sharedSecret: '' } },
    { name: 'Webhooks', settings: { webhooks: [hook('https://a')], extra: 1 } },
  ],
  DestinationPatch: [
    { enabled: true },
    { settings: { sharedSecret: null } },
    { settings: { webhooks: [hook('https://b')] } },
    {},
    { settings: {} },
    { enabled: 'yes' },
    { name: 'Webhooks' },
    { settings: { sharedSecret: '' } },
    { sourceIds: [] },
    { settings: { previousSecret: null, standardWebhooks: null, timeoutMs: null, autoDisableAfterMs: 60000 } },
    { settings: { webhooks: [{ url: 'https://b', disabled: false }], maxConcurrentRequests: 1024, maxRequestsPerSecond: 1 } },
    { settings: { previousSecret: { secret: 's', expiresAt: '2026-11-25T10:00:00.000Z' } } },
    { settings: { timeoutMs: 999 } },
    { settings: { retryWindowMs: 259200001 } },
    { settings: { standardWebhooks: 'yes' } },
    { settings: { webhooks: [{ url: 'https://b', disabled: 'no' }] } },
  ],
  SecretRotation: [
    {},
    { secret: 'sixteen-chars-00' },
    { overlapMs: 0 },
    { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', overlapMs: 604800000 },
    { secret: 'fifteen-chars-0' },
    { overlapMs: 604800001 },
    { overlapMs: -1 },
    { overlapMs: 1.5 },
    { secret: null },
    { previousSecret: 'x' },
    [],
  ],
  ReplayRequest: [
    { all: true },
    { messageIds: ['m1'] },
    { since: '2026-11-21T00:00:00Z' },
    {},
    { all: false },
    { all: true, since: 'x' },
    { messageIds: [] },
    { messageIds: [''] },
    { other: 1 },
  ],
};
const querySamples: Record<string, Record<string, string>[]> = {
  PageQuery: [{}, { limit: '5' }, { limit: '0' }, { limit: '1001' }, { limit: 'abc' }, { cursor: '12' }, { cursor: '' }, { other: 'x' }],
  DeliveriesQuery: [{}, { status: 'success' }, { status: 'failed', limit: '2' }, { status: 'bogus' }, { limit: '-1' }],
  StatsQuery: [{}, { window: 'hour' }, { window: 'day' }, { window: 'week' }, { window: '' }, { other: 'x' }],
};

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 with one operation per route, each with a unique operationId', () => {
    expect(doc['openapi']).toBe('3.1.0');
    const operations = Object.entries(doc['paths'] as Json).flatMap(([p, methods]) =>
      Object.entries(methods as Json).map(([m, op]) => ({ key: `${m.toUpperCase()} ${p}`, id: (op as Json)['operationId'] as string })),
    );
    expect(operations.map((o) => o.key).sort()).toEqual(
      routes.map((r) => `${r.method.toUpperCase()} /admin/v1${r.path.replace(/:([a-z]+)/gi, '{$1}')}`).sort(),
    );
    expect(new Set(operations.map((o) => o.id)).size).toBe(routes.length);
  });

  it('compiles as JSON Schema 2020-12 (every component, every reference resolved)', () => {
    for (const name of Object.keys(doc['components']['schemas'] as Json)) expect(() => fromDocument(name)).not.toThrow();
  });

  it('names, for every route with a body, the schema that route validates with', () => {
    for (const route of routes.filter((r) => r.body)) {
      expect(
        doc['paths'][`/admin/v1${route.path.replace(/:([a-z]+)/gi, '{$1}')}`][route.method]['requestBody']['content']['application/json'][
          'schema'
        ],
      ).toEqual({ $ref: `#/components/schemas/${route.body}` });
    }
  });

  it.each(Object.keys(samples))('accepts and refuses the same %s bodies as the route validator', (name) => {
    const route = adminBodyValidator(name as AdminApiDefinition);
    const documented = fromDocument(name);
    const verdicts = samples[name]!.map((body) => [route(structuredClone(body)), documented(structuredClone(body))]);
    for (const [byRoute, byDocument] of verdicts) expect(byDocument).toBe(byRoute);
    // The corpus holds both kinds, so the comparison means something.
    expect(new Set(verdicts.map(([v]) => v)).size).toBe(2);
  });

  it.each(Object.keys(querySamples))('documents the %s query parameters the routes accept', (name) => {
    const route = adminQueryValidator(name as AdminApiDefinition);
    const params = routes.find((r) => r.query === name)!;
    const documented = doc['paths'][`/admin/v1${params.path.replace(/:([a-z]+)/gi, '{$1}')}`][params.method]['parameters'].filter(
      (p: Json) => p['in'] === 'query',
    );
    const coercing = new Ajv2020({ strict: true, allowUnionTypes: true, coerceTypes: true });
    coercing.addVocabulary(['components']);
    coercing.addSchema({ $id: 'openapi.json', components: doc['components'] });
    for (const query of querySamples[name]!) {
      const unknown = Object.keys(query).some((k) => !documented.some((p: Json) => p['name'] === k));
      const byDocument =
        !unknown && documented.every((p: Json) => !(p['name'] in query) || coercing.validate(p['schema'], query[p['name']]));
      expect(byDocument).toBe(route({ ...query }));
    }
  });

  it('is committed as docs/admin-openapi.json (run pnpm gen:openapi after changing a route or schema)', () => {
    const committed: unknown = JSON.parse(readFileSync(path.resolve(__dirname, '../../../../docs/admin-openapi.json'), 'utf8'));
    expect(committed).toEqual(doc);
  });
});
