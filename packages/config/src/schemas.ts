/**
 * Compiled validators for the JSON schemas under ../schemas (the contract's source of truth).
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import normalizedCallSchema from '../schemas/normalized-call.schema.json';
import routeJobSchema from '../schemas/route-job.schema.json';
import webhookSettingsSchema from '../schemas/webhook-settings.schema.json';
import configSchema from '../schemas/eventrelay-config.schema.json';
import deliverJobSchema from '../schemas/deliver-job.schema.json';
import deliveryAttemptSchema from '../schemas/delivery-attempt.schema.json';
import deadLetterSchema from '../schemas/dead-letter.schema.json';
import type { DeadLetter, DeliverJob, DeliveryAttempt, EventrelayConfig, NormalizedCall, RouteJob, WebhookSettings } from './generated/contracts.js';

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
ajv.addSchema([normalizedCallSchema, routeJobSchema, webhookSettingsSchema, configSchema, deliverJobSchema, deliveryAttemptSchema, deadLetterSchema]);

function validator<T>(id: string): ValidateFunction<T> {
  const fn = ajv.getSchema<T>(id);
  if (!fn) throw new Error(`schema ${id} is not registered`);
  return fn;
}

export const validateNormalizedCall = validator<NormalizedCall>('normalized-call.schema.json');
export const validateRouteJob = validator<RouteJob>('route-job.schema.json');
export const validateWebhookSettings = validator<WebhookSettings>('webhook-settings.schema.json');
export const validateConfigShape = validator<EventrelayConfig>('eventrelay-config.schema.json');
export const validateDeliverJob = validator<DeliverJob>('deliver-job.schema.json');
export const validateDeliveryAttempt = validator<DeliveryAttempt>('delivery-attempt.schema.json');
export const validateDeadLetter = validator<DeadLetter>('dead-letter.schema.json');

/** Turns ajv errors into short sentences that name the field, e.g. `sources[0].writeKey must match ...`. */
export function describeSchemaErrors(errors: ErrorObject[] | null | undefined, root = ''): string[] {
  return (errors ?? []).map((e) => {
    const at = root + e.instancePath.replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/\//g, '.').replace(/^\./, root ? '.' : '');
    const where = at === '' ? '(root)' : at;
    switch (e.keyword) {
      case 'required':
        return `${where === '(root)' ? '' : `${where}.`}${String(e.params.missingProperty)} is required`;
      case 'additionalProperties':
        return `${where} has an unknown field "${String(e.params.additionalProperty)}"`;
      case 'enum':
        return `${where} must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
      default:
        return `${where} ${e.message ?? 'is invalid'}`;
    }
  });
}
