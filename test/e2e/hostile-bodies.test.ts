/**
 * No 500 for any input (issue 18): hostile bodies — deep nesting, huge arrays, wrong types,
 * `__proto__` and `constructor` keys, non-JSON, empty bodies, wrong content types — posted to
 * every admin route (the list comes from the route table, through the OpenAPI document built from
 * it) and to every intake route, each service running for real on real Redis. Every answer must
 * be a JSON error in the 4xx range (a bodiless admin route may also take a well-formed body and
 * answer 2xx, never 5xx), nothing may pollute Object.prototype, and both processes must still
 * serve afterwards.
 */
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { CALL_TYPES } from '../../services/ingest/src/domain/routes';
import { MAX_BODY_DEPTH, adminBodyValidator, type AdminApiDefinition } from '@eventrelay/config';
import { ADMIN_TEST_TOKEN, startTestAdmin, type TestAdmin } from '../support/admin';
import { startTestIngest, type TestIngest } from '../support/ingest';
import { deletePrefix, eventually, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

interface Hostile {
  readonly name: string;
  readonly body: Buffer;
  readonly headers?: Record<string, string>;
  /**
   * `malformed`: no route may take it (not JSON, too deep, too large, undecodable); `shape`: JSON
   * no body schema accepts, which a route that reads no body may ignore.
   */
  readonly kind: 'malformed' | 'shape';
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const deep = (open: string, close: string, levels: number, inner = '1') => Buffer.from(open.repeat(levels) + inner + close.repeat(levels));
const deepCondition = (levels: number) =>
  Buffer.from(
    `{"name":"Deep","sourceIds":["src-a"],"destinationIds":["dst-a"],"condition":` +
      '{"not":'.repeat(levels) +
      '{"trait":{"key":"plan","equals":"pro"}}' +
      '}'.repeat(levels) +
      '}',
  );
/** Every field name of every admin body and of a call, each with a value of the wrong type. */
const wrongTypes = {
  id: 5,
  name: ['x'],
  type: {},
  writeKey: 1,
  enabled: 'yes',
  sourceIds: 's',
  destinationIds: 1,
  settings: [],
  condition: 'c',
  all: 'yes',
  messageIds: {},
  since: 7,
  regulationType: 1,
  subjectType: [],
  subjectIds: 'u',
  rateLimitPerSecond: '10',
  userId: {},
  anonymousId: [],
  event: 9,
  properties: 'p',
  traits: 3,
  context: [],
  timestamp: true,
  messageId: {},
  batch: 'b',
};
const manyStrings = (n: number) => Array.from({ length: n }, (_, i) => `x${i}`);

const HOSTILE: readonly Hostile[] = [
  { name: `objects nested ${MAX_BODY_DEPTH + 1} deep`, body: deep('{"a":', '}', MAX_BODY_DEPTH + 1), kind: 'malformed' },
  { name: 'objects nested 5,000 deep', body: deep('{"a":', '}', 5_000), kind: 'malformed' },
  { name: 'arrays nested 100,000 deep', body: Buffer.from(`{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`), kind: 'malformed' },
  { name: 'an audience condition nested 2,000 deep (16 KB)', body: deepCondition(2_000), kind: 'malformed' },
  { name: 'an audience condition nested 100 deep', body: deepCondition(100), kind: 'malformed' },
  { name: 'a body over 1 MB', body: json({ name: 'x'.repeat(1_100_000) }), kind: 'malformed' },
  { name: 'not JSON', body: Buffer.from('name=x&type=web'), kind: 'malformed' },
  { name: 'truncated JSON', body: Buffer.from('{"name": "x", "type": '), kind: 'malformed' },
  // Decoded with replacement characters: a JSON object with an odd key, not a parse error.
  { name: 'invalid UTF-8', body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), kind: 'shape' },
  { name: 'gzip that is not gzip', body: Buffer.from('not gzip at all'), headers: { 'content-encoding': 'gzip' }, kind: 'malformed' },
  {
    name: 'a gzip bomb (1 MB of zeros inflating past the limit)',
    body: gzipSync(Buffer.alloc(3_000_000, 0x20)),
    headers: { 'content-encoding': 'gzip' },
    kind: 'malformed',
  },
  { name: 'an unknown content encoding', body: json({ name: 'x' }), headers: { 'content-encoding': 'br2' }, kind: 'malformed' },
  { name: 'a JSON string', body: Buffer.from('"just a string"'), kind: 'malformed' },
  { name: 'JSON null', body: Buffer.from('null'), kind: 'malformed' },
  { name: 'empty', body: Buffer.alloc(0), kind: 'shape' },
  { name: 'an empty array', body: Buffer.from('[]'), kind: 'shape' },
  { name: 'a huge top-level array', body: json(Array.from({ length: 300_000 }, () => 0)), kind: 'shape' },
  {
    name: 'huge arrays in every list field',
    body: json({
      name: 'Huge',
      type: 'web',
      sourceIds: manyStrings(40_000),
      destinationIds: manyStrings(20_000),
      subjectIds: manyStrings(20_000),
      messageIds: manyStrings(20_000),
      batch: Array.from({ length: 20_000 }, () => ({})),
    }),
    kind: 'shape',
  },
  { name: 'every field of the wrong type', body: json(wrongTypes), kind: 'shape' },
  { name: 'text/plain content type', body: json(wrongTypes), headers: { 'content-type': 'text/plain' }, kind: 'shape' },
  {
    name: 'form content type',
    body: Buffer.from('name=x'),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    kind: 'malformed',
  },
  {
    name: '__proto__ keys at every level',
    body: Buffer.from(
      '{"__proto__":{"polluted":"yes"},"name":"P","type":"web","settings":{"__proto__":{"polluted":"yes"},"webhooks":[{"url":"https://a.example","headers":{"__proto__":{"polluted":"yes"}}}]},"condition":{"__proto__":{"polluted":"yes"}},"properties":{"__proto__":{"polluted":"yes"}},"batch":[{"__proto__":{"polluted":"yes"}}]}',
    ),
    kind: 'shape',
  },
  {
    name: 'constructor.prototype keys',
    body: json({
      constructor: { prototype: { polluted: 'yes' } },
      name: 'C',
      settings: { constructor: { prototype: { polluted: 'yes' } } },
    }),
    kind: 'shape',
  },
];

/** Raw node:http, so GET and DELETE can carry a body too. */
function send(
  url: string,
  method: string,
  hostile: Hostile,
  auth: string,
): Promise<{ status: number; body: { code?: unknown; rejected?: unknown } }> {
  const headers: Record<string, string | number> = {
    authorization: auth,
    'content-type': 'application/json',
    'content-length': hostile.body.length,
    ...hostile.headers,
  };
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body: { code?: unknown; rejected?: unknown };
        try {
          body = JSON.parse(text) as typeof body;
        } catch {
          body = { code: undefined, rejected: text.slice(0, 200) };
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end(hostile.body);
  });
}

function allRejected(hostile: Hostile, answer: { rejected?: unknown }): boolean {
  const sent = JSON.parse(hostile.body.toString()) as { batch?: unknown[] };
  return Array.isArray(sent.batch) && Array.isArray(answer.rejected) && answer.rejected.length === sent.batch.length;
}

function expectNoPollution() {
  const probe: Record<string, unknown> = {};
  expect(probe['polluted']).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty('polluted');
}

describe('hostile bodies to every admin route', () => {
  const prefix = uniquePrefix('hostile-admin');
  let admin: TestAdmin;
  let routes: { method: string; path: string; takesBody: boolean; takesEmptyBody: boolean }[];

  beforeAll(async () => {
    admin = await startTestAdmin({ prefix });
    const setup = [
      await admin.call('POST', '/sources', { id: 'src-a', name: 'A', type: 'web' }),
      await admin.call('POST', '/destinations', {
        id: 'dst-a',
        name: 'Webhooks',
        sourceIds: ['src-a'],
        settings: { webhooks: [{ url: 'https://hooks.example.com/in' }] },
      }),
      await admin.call('POST', '/audiences', {
        id: 'aud-a',
        name: 'Pro',
        sourceIds: ['src-a'],
        destinationIds: ['dst-a'],
        condition: { trait: { key: 'plan', equals: 'pro' } },
      }),
    ];
    expect(setup.map((a) => a.status)).toEqual([201, 201, 201]);
    const doc = (await admin.call('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { $ref: string } }> } }>>;
    };
    routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => {
        const local = path.replace(/^\/admin\/v1/, '');
        const id = local.startsWith('/sources')
          ? 'src-a'
          : local.startsWith('/destinations')
            ? 'dst-a'
            : local.startsWith('/audiences')
              ? 'aud-a'
              : 'reg_unknown';
        const body = op.requestBody?.content['application/json']?.schema.$ref.split('/').pop();
        return {
          method: method.toUpperCase(),
          path: local.replace('{id}', id),
          takesBody: body !== undefined,
          // An absent body is read as {}; a body whose every field is optional may be left out.
          takesEmptyBody: body !== undefined && adminBodyValidator(body as AdminApiDefinition)({}),
        };
      }),
    );
  });
  afterAll(async () => {
    await admin.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  it('takes its route list from the route table: every route, including the bodied writes', () => {
    expect(routes.length).toBeGreaterThanOrEqual(25);
    expect(routes.filter((r) => r.takesBody).map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining([
        'POST /sources',
        'PATCH /sources/src-a',
        'POST /destinations',
        'PATCH /destinations/dst-a',
        'POST /destinations/dst-a/rotate-secret',
        'POST /destinations/dst-a/replay',
        'POST /audiences',
        'POST /regulations',
      ]),
    );
  });

  it.each(HOSTILE.map((h) => [h.name, h] as const))('%s: 4xx with an error code on every route, never 5xx', async (_name, hostile) => {
    const answers: string[] = [];
    for (const route of routes) {
      // DELETE would take the fixtures away from the routes after it; it is sent last, below.
      if (route.method === 'DELETE') continue;
      const res = await send(`${admin.url}/admin/v1${route.path}`, route.method, hostile, `Bearer ${ADMIN_TEST_TOKEN}`);
      const mustRefuse = hostile.kind === 'malformed' || (route.takesBody && !(hostile.body.length === 0 && route.takesEmptyBody));
      const fine = mustRefuse ? res.status >= 400 && res.status < 500 && typeof res.body.code === 'string' : res.status < 500;
      if (!fine) answers.push(`${route.method} ${route.path} -> ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
    }
    expect(answers).toEqual([]);
    expectNoPollution();
  });

  it('names the depth limit when refusing a deep audience condition', async () => {
    const res = await send(`${admin.url}/admin/v1/audiences`, 'POST', HOSTILE[3]!, `Bearer ${ADMIN_TEST_TOKEN}`);
    expect(res).toEqual({
      status: 400,
      body: {
        success: false,
        code: 'invalid_request',
        message: `(body) nests objects and arrays deeper than ${MAX_BODY_DEPTH} levels`,
        fields: [{ field: '(body)', message: `nests objects and arrays deeper than ${MAX_BODY_DEPTH} levels` }],
      },
    });
  });

  it('hostile paths and query strings on every route: 4xx, never 5xx', async () => {
    const ids = ['%E0%A4%A', '%', '..%2F..%2Fetc', 'x'.repeat(5_000), '__proto__', 'constructor', '%00'];
    const queries = [
      'limit=abc',
      'limit=-1',
      'limit=1e309',
      'limit=99999999999999999999',
      'cursor=%ZZ',
      'cursor=../..',
      'status=__proto__',
      'limit[]=1',
      'a=' + 'b'.repeat(8_000),
    ];
    const empty: Hostile = { name: 'empty', body: Buffer.alloc(0), kind: 'shape' };
    const answers: string[] = [];
    for (const route of routes.filter((r) => r.method !== 'DELETE')) {
      const targets = [
        ...(route.path.includes('src-a') ||
        route.path.includes('dst-a') ||
        route.path.includes('aud-a') ||
        route.path.includes('reg_unknown')
          ? ids.map((id) => route.path.replace(/src-a|dst-a|aud-a|reg_unknown/, id))
          : []),
        ...queries.map((q) => `${route.path}?${q}`),
      ];
      for (const target of targets) {
        const res = await send(`${admin.url}/admin/v1${target}`, route.method, empty, `Bearer ${ADMIN_TEST_TOKEN}`);
        if (res.status >= 500)
          answers.push(`${route.method} ${target.slice(0, 80)} -> ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
      }
    }
    expect(answers).toEqual([]);
    const infinite = await admin.call('GET', '/audit?limit=1e309');
    expect(infinite.status).toBe(400);
    expect(infinite.body.fields).toEqual([{ field: 'limit', message: 'must be a finite number' }]);
  });

  it('DELETE routes refuse malformed bodies too, and the process still serves afterwards', async () => {
    const answers: string[] = [];
    for (const route of routes.filter((r) => r.method === 'DELETE')) {
      for (const hostile of HOSTILE.filter((h) => h.kind === 'malformed')) {
        const res = await send(`${admin.url}/admin/v1${route.path}`, route.method, hostile, `Bearer ${ADMIN_TEST_TOKEN}`);
        if (!(res.status >= 400 && res.status < 500)) answers.push(`${route.path} ${hostile.name} -> ${res.status}`);
      }
    }
    expect(answers).toEqual([]);
    expect((await admin.call('GET', '/sources/src-a')).status).toBe(200);
    expect((await fetch(`${admin.url}/healthz`)).status).toBe(200);
  });
});

describe('hostile bodies to every intake route', () => {
  let ingest: TestIngest;
  const paths = [...CALL_TYPES, ...CALL_TYPES.map((t) => t[0]!), 'batch', 'import', 'b'].map((r) => `/v1/${r}`);

  beforeAll(async () => {
    ingest = await startTestIngest({ label: 'hostile-intake' });
  });
  afterAll(async () => ingest.close());

  it.each(HOSTILE.map((h) => [h.name, h] as const))('%s: 4xx with an error code on every route, never 5xx', async (_name, hostile) => {
    const auth = `Basic ${Buffer.from(`${ingest.writeKey}:`).toString('base64')}`;
    const answers: string[] = [];
    for (const path of paths) {
      const res = await send(`${ingest.url}${path}`, 'POST', hostile, auth);
      // docs/spec.md §2: a batch whose items are all invalid is 200 with every item in `rejected`.
      if (!(res.status >= 400 && res.status < 500 && typeof res.body.code === 'string') && !allRejected(hostile, res.body))
        answers.push(`${path} -> ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
    }
    expect(answers).toEqual([]);
    expectNoPollution();
  });

  it('hostile paths and query strings: 4xx, never 5xx', async () => {
    const auth = `Basic ${Buffer.from(`${ingest.writeKey}:`).toString('base64')}`;
    const targets = [
      '/v1/%E0%A4%A',
      '/v1/%',
      '/v1/track?x=%ZZ',
      '/v1/track/../batch',
      `/v1/${'a'.repeat(8_000)}`,
      '/v1/__proto__',
      '/v1/constructor',
      '/v1//track',
      '/v1/track?writeKey[]=x',
    ];
    const answers: string[] = [];
    for (const target of targets) {
      const res = await send(`${ingest.url}${target}`, 'POST', { name: 'wrong types', body: json(wrongTypes), kind: 'shape' }, auth);
      if (!(res.status >= 400 && res.status < 500)) answers.push(`${target.slice(0, 60)} -> ${res.status}`);
    }
    expect(answers).toEqual([]);
  });

  it('still serves a valid call afterwards, and queued nothing from the hostile bodies', async () => {
    const auth = `Basic ${Buffer.from(`${ingest.writeKey}:`).toString('base64')}`;
    const res = await send(
      `${ingest.url}/v1/track`,
      'POST',
      { name: 'valid', body: json({ userId: 'u1', event: 'Ok' }), kind: 'shape' },
      auth,
    );
    expect(res.status).toBe(200);
    expect((await fetch(`${ingest.url}/healthz`)).status).toBe(200);
    await eventually(async () => {
      const queued = (await ingest.routeJobs()).flatMap((b) => b.calls);
      expect(queued.map((c) => [c.type, c.userId])).toEqual([['track', 'u1']]);
    });
  });
});
