/**
 * From a parsed request body to the calls to accept and the ones to reject (docs/spec.md §2).
 * A single call that is invalid fails the request; a batch keeps its valid items and lists the rest.
 */
import type { NormalizedCall } from '@eventrelay/config';
import { ValidationError } from '@eventrelay/config';
import type { IntakeRoute } from './routes.js';
import { isCallType, CALL_TYPES } from './routes.js';
import { checkCall, isPlainObject } from './validate.js';
import { normalizeCall, normalizeContext } from './normalize.js';
import { MAX_BATCH_ITEMS, MAX_CALL_BYTES } from './limits.js';

export interface Rejection {
  readonly index: number;
  readonly code: 'invalid_event' | 'payload_too_large';
  readonly message: string;
}

export interface Interpretation {
  readonly accepted: NormalizedCall[];
  readonly rejected: Rejection[];
}

export interface InterpretContext {
  readonly receivedAt: number;
  readonly newMessageId: () => string;
  /** False only when no item can be over the per-call limit (see itemsNeedMeasuring). */
  readonly measureItems: boolean;
}

export function interpretBody(route: IntakeRoute, body: Record<string, unknown>, ctx: InterpretContext): Interpretation {
  if (route.kind === 'single') {
    const checked = checkCall(body, route.type);
    if (!checked.ok) throw new ValidationError('invalid_event', checked.problem.message);
    return {
      accepted: [normalizeCall(body, checked.call, route.type, normalizeContext(ctx.receivedAt, undefined, ctx.newMessageId))],
      rejected: [],
    };
  }

  const items = body['batch'];
  if (!Array.isArray(items)) throw new ValidationError('invalid_request', 'batch must be an array');
  if (items.length > MAX_BATCH_ITEMS)
    throw new ValidationError('payload_too_large', `batch has ${items.length} items; at most ${MAX_BATCH_ITEMS} are allowed`);

  const envelopeContext = isPlainObject(body['context']) ? body['context'] : undefined;
  const envelopeIntegrations = isPlainObject(body['integrations']) ? body['integrations'] : undefined;
  const normalize = normalizeContext(ctx.receivedAt, body['sentAt'], ctx.newMessageId);
  const accepted: NormalizedCall[] = [];
  const rejected: Rejection[] = [];
  items.forEach((item: unknown, index) => {
    if (!isPlainObject(item)) {
      rejected.push({ index, code: 'invalid_event', message: 'batch item must be an object' });
      return;
    }
    const type = item['type'];
    if (!isCallType(type)) {
      rejected.push({ index, code: 'invalid_event', message: `type must be one of ${CALL_TYPES.join(', ')}` });
      return;
    }
    // Measured as stored and delivered: envelope merged in, re-serialized.
    const merged = mergeEnvelope(item, envelopeContext, envelopeIntegrations);
    const size = ctx.measureItems ? Buffer.byteLength(JSON.stringify(merged)) : 0;
    if (size > MAX_CALL_BYTES) {
      rejected.push({
        index,
        code: 'payload_too_large',
        message: `call is ${size} bytes with the batch context merged in; at most ${MAX_CALL_BYTES} are allowed`,
      });
      return;
    }
    const checked = checkCall(merged, type);
    if (!checked.ok) {
      rejected.push({ index, code: 'invalid_event', message: checked.problem.message });
      return;
    }
    accepted.push(normalizeCall(merged, checked.call, type, normalize));
  });
  return { accepted, rejected };
}

/** The envelope's context and integrations sit under the item's own: the item's keys win. */
function mergeEnvelope(
  item: Record<string, unknown>,
  context: Record<string, unknown> | undefined,
  integrations: Record<string, unknown> | undefined,
): Record<string, unknown> {
  if (!context && !integrations) return item;
  const merged = { ...item };
  if (context) merged['context'] = isPlainObject(item['context']) ? { ...context, ...item['context'] } : (item['context'] ?? context);
  if (integrations)
    merged['integrations'] = isPlainObject(item['integrations'])
      ? { ...integrations, ...item['integrations'] }
      : (item['integrations'] ?? integrations);
  return merged;
}
