/**
 * Compiled validators for the JSON schemas under ../schemas (the contract's source of truth).
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import normalizedCallSchema from '../schemas/normalized-call.schema.json';
import routeJobSchema from '../schemas/route-job.schema.json';
import callBatchSchema from '../schemas/call-batch.schema.json';
import webhookSettingsSchema from '../schemas/webhook-settings.schema.json';
import configSchema from '../schemas/eventrelay-config.schema.json';
import deliverJobSchema from '../schemas/deliver-job.schema.json';
import deliveryAttemptSchema from '../schemas/delivery-attempt.schema.json';
import deadLetterSchema from '../schemas/dead-letter.schema.json';
import adminApiSchema from '../schemas/admin-api.schema.json';
import audienceConditionSchema from '../schemas/audience-condition.schema.json';
import destinationFiltersSchema from '../schemas/destination-filters.schema.json';
import profileJobSchema from '../schemas/profile-job.schema.json';
import audienceJobSchema from '../schemas/audience-job.schema.json';
import regulationJobSchema from '../schemas/regulation-job.schema.json';
import { describeProblem, type FieldProblem } from './field-problems.js';
import type { EventrelayConfig, NormalizedCall, RouteEntry } from './generated/contracts.js';

/** Every schema file, in no particular order; `$ref`s between them use their `$id`s. */
export const contractSchemas = [
  normalizedCallSchema,
  routeJobSchema,
  callBatchSchema,
  webhookSettingsSchema,
  configSchema,
  deliverJobSchema,
  deliveryAttemptSchema,
  deadLetterSchema,
  adminApiSchema,
  audienceConditionSchema,
  destinationFiltersSchema,
  profileJobSchema,
  audienceJobSchema,
  regulationJobSchema,
] as const;

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, verbose: true });
ajv.addSchema([...contractSchemas]);
// Query strings arrive as text: this instance turns "20" into 20 and fills in defaults.
const queryAjv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, verbose: true, coerceTypes: true, useDefaults: true });
queryAjv.addSchema([...contractSchemas]);

function validator<T>(id: string): ValidateFunction<T> {
  const fn = ajv.getSchema<T>(id);
  if (!fn) throw new Error(`schema ${id} is not registered`);
  return fn;
}

export type AdminApiDefinition = keyof typeof adminApiSchema.definitions;

/** The validator of an admin API body, by its definition name in admin-api.schema.json. */
export function adminBodyValidator<T>(name: AdminApiDefinition): ValidateFunction<T> {
  return validator<T>(`admin-api.schema.json#/definitions/${name}`);
}

/** The same for a query string: numbers coerced from text, defaults filled in. */
export function adminQueryValidator<T>(name: AdminApiDefinition): ValidateFunction<T> {
  const fn = queryAjv.getSchema<T>(`admin-api.schema.json#/definitions/${name}`);
  if (!fn) throw new Error(`schema ${name} is not registered`);
  return fn;
}

export const validateNormalizedCall = validator<NormalizedCall>('normalized-call.schema.json');
export const validateRouteEntry = validator<RouteEntry>('call-batch.schema.json');
export const validateConfigShape = validator<EventrelayConfig>('eventrelay-config.schema.json');

/** Ajv errors as field problems, e.g. `{field: 'sources[0].writeKey', message: 'must match ...'}`. */
export function schemaProblems(errors: ErrorObject[] | null | undefined, root = ''): FieldProblem[] {
  return (errors ?? []).map((e) => {
    const at =
      root +
      e.instancePath
        .replace(/\/(\d+)(?=\/|$)/g, '[$1]')
        .replace(/\//g, '.')
        .replace(/^\./, root ? '.' : '');
    switch (e.keyword) {
      case 'required':
        return { field: `${at === '' ? '' : `${at}.`}${String(e.params.missingProperty)}`, message: 'is required' };
      case 'additionalProperties':
        return { field: `${at === '' ? '' : `${at}.`}${String(e.params.additionalProperty)}`, message: 'is not a known field' };
      case 'pattern': {
        // A pattern means little to people; the schema's description says what it asks for.
        const description = (e.parentSchema as { description?: unknown } | undefined)?.description;
        return {
          field: at === '' ? '(root)' : at,
          message: typeof description === 'string' ? `must be ${description}` : (e.message ?? 'is invalid'),
        };
      }
      case 'minProperties':
      case 'maxProperties':
        return { field: at === '' ? '(root)' : at, message: propertyCountMessage(e) };
      case 'enum':
        return {
          field: at === '' ? '(root)' : at,
          message: `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
        };
      default:
        return { field: at === '' ? '(root)' : at, message: e.message ?? 'is invalid' };
    }
  });
}

// Objects of "exactly one of these keys" (audience conditions) say so instead of counting properties.
function propertyCountMessage(e: ErrorObject): string {
  const schema = e.parentSchema as
    { minProperties?: number; maxProperties?: number; required?: string[]; properties?: Record<string, unknown> } | undefined;
  const required = schema?.required ?? [];
  const choices = Object.keys(schema?.properties ?? {}).filter((k) => !required.includes(k));
  if (schema?.minProperties === undefined || schema.minProperties !== schema.maxProperties || schema.minProperties !== required.length + 1)
    return e.message ?? 'is invalid';
  return `must have ${required.map((k) => `${k} and `).join('')}exactly one of ${choices.join(', ')}`;
}

/** Ajv errors as short sentences that name the field, e.g. `sources[0].writeKey must match ...`. */
export function describeSchemaErrors(errors: ErrorObject[] | null | undefined, root = ''): string[] {
  return schemaProblems(errors, root).map(describeProblem);
}
