/**
 * The OpenAPI 3.1 document of the admin API, built from the route declarations and the very
 * schema files the routes validate with (packages/config/schemas). The schema files are draft-07;
 * what they use reads the same in OpenAPI 3.1's JSON Schema 2020-12 once their `definitions` are
 * hoisted into `components.schemas` and their `$ref`s pointed there.
 */
import { contractSchemas, errorCodes, type AdminApiDefinition } from '@eventrelay/config';
import { ADMIN_BASE, type RouteSpec } from './route-spec.js';

type Json = Record<string, unknown>;

/** The document's own version (info.version); the API's is in its path (/admin/v1). */
export const OPENAPI_VERSION = '1.0.0';

/** The registry object of admin-api.schema.json only lists its definitions; it is not a shape. */
const SKIPPED_ROOTS = new Set(['AdminApi']);

export function buildOpenApi(routes: readonly RouteSpec[], version: string): Json {
  const components = schemaComponents();
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes) {
    const path = `${ADMIN_BASE}${route.path.replace(/:([A-Za-z]+)/g, '{$1}')}`;
    (paths[path] ??= {})[route.method] = operation(route, components);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'eventrelay admin API',
      version,
      description:
        'Sources, destinations, delivery log, dead letters and replay, the event debugger and the audit log. Errors are `{success: false, code, message, fields?}`; every code is in docs/errors.md.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN (one of them, when several are set)' } },
    },
  };
}

function operation(route: RouteSpec, components: Json): Json {
  const parameters = [
    ...[...route.path.matchAll(/:([A-Za-z]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } })),
    ...(route.query ? queryParameters(route.query, components) : []),
  ];
  const answer =
    route.answer.schema === undefined
      ? undefined
      : route.answer.list
        ? { type: 'array', items: ref(route.answer.schema) }
        : ref(route.answer.schema);
  const errors = ['unauthorized', ...route.errors, 'internal_error'] as const;
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.public ? { security: [] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: ref(route.body) } } } } : {}),
    responses: {
      [String(route.answer.status)]: {
        description: route.answer.description,
        ...(answer ? { content: { 'application/json': { schema: answer } } } : {}),
      },
      ...Object.fromEntries(
        errors
          .filter((code) => !(route.public && code === 'unauthorized'))
          .map((code) => [
            String(errorCodes[code].httpStatus),
            { description: `${code}: ${errorCodes[code].summary}`, content: { 'application/json': { schema: ref('ApiError') } } },
          ]),
      ),
    },
  };
}

function queryParameters(name: AdminApiDefinition, components: Json): Json[] {
  const schema = components[name] as { properties: Record<string, Json> };
  return Object.entries(schema.properties).map(([param, property]) => ({ name: param, in: 'query', required: false, schema: property }));
}

function ref(name: string): Json {
  return { $ref: `#/components/schemas/${name}` };
}

/** Every schema file and every definition in them, as components; refs rewritten to point there. */
function schemaComponents(): Json {
  const titles = new Map(contractSchemas.map((s) => [s.$id, s.title]));
  const out: Json = {};
  const add = (name: string, schema: unknown, file: string) => {
    if (name in out) throw new Error(`openapi: two schemas are called ${name}`);
    out[name] = rewrite(schema, file, titles);
  };
  for (const file of contractSchemas) {
    const { $schema: _s, $id, definitions, ...root } = file as Json & { $id: string; definitions?: Record<string, unknown> };
    if (!SKIPPED_ROOTS.has(file.title)) add(file.title, root, $id);
    for (const [key, definition] of Object.entries(definitions ?? {})) add(key, definition, $id);
  }
  return out;
}

function rewrite(value: unknown, file: string, titles: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => rewrite(v, file, titles));
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [key, v] of Object.entries(value))
    out[key] = key === '$ref' && typeof v === 'string' ? componentRef(v, file, titles) : rewrite(v, file, titles);
  return out;
}

/** `other.schema.json#/definitions/X` → `#/components/schemas/X`; `other.schema.json#/p` → its title + `/p`. */
function componentRef(reference: string, file: string, titles: Map<string, string>): string {
  const [target = '', pointer = ''] = reference.split('#');
  const definition = /^\/definitions\/([^/]+)(.*)$/.exec(pointer);
  if (definition) return `#/components/schemas/${definition[1]}${definition[2]}`;
  const title = titles.get(target === '' ? file : target);
  if (!title) throw new Error(`openapi: cannot resolve $ref ${reference} in ${file}`);
  return `#/components/schemas/${title}${pointer}`;
}
