/**
 * Per-call validation (docs/spec.md §2). Messages name the field, because SDK users read them in
 * their logs. Ids sent as numbers are accepted as their decimal text, as Segment does.
 */
import type { CallType } from './routes.js';
import { MAX_EVENT_LENGTH, MAX_ID_LENGTH, MAX_MESSAGE_ID_LENGTH, MAX_TRAIT_KEY_LENGTH } from './limits.js';

export type RawCall = Record<string, unknown>;
export type CallProblem = { readonly field: string; readonly message: string };

const ID_FIELDS = ['userId', 'anonymousId', 'groupId', 'previousId'] as const;
const OBJECT_FIELDS = ['properties', 'traits', 'context', 'integrations'] as const;
const STRING_FIELDS = ['event', 'name', 'category'] as const;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Read by normalization, never copied onto the queued call as sent. */
const TIME_AND_SECRET_FIELDS: ReadonlySet<string> = new Set(['writeKey', 'timestamp', 'originalTimestamp', 'sentAt', 'receivedAt']);

/**
 * Returns a copy of the call with ids coerced to strings, null fields dropped and the time and
 * write key fields left out (normalization sets those), or the first problem. One pass, one copy:
 * this runs for every call on the hot path.
 */
export function checkCall(raw: RawCall, type: CallType): { ok: true; call: RawCall } | { ok: false; problem: CallProblem } {
  const call: RawCall = {};
  for (const key of Object.keys(raw)) {
    const value = raw[key];
    // JSON.parse makes "__proto__" an own key; assigning it would set the copy's prototype and
    // let fields hidden in it pass the checks below.
    if (value !== null && key !== '__proto__' && !TIME_AND_SECRET_FIELDS.has(key)) call[key] = value;
  }

  for (const field of ID_FIELDS) {
    const value = call[field];
    if (value === undefined) continue;
    if (typeof value === 'number' && Number.isFinite(value)) call[field] = String(value);
    else if (typeof value !== 'string') return fail(field, `${field} must be a string`);
    const id = call[field] as string;
    if (id === '') delete call[field];
    else if (id.length > MAX_ID_LENGTH) return fail(field, `${field} is ${id.length} characters; at most ${MAX_ID_LENGTH} are allowed`);
  }
  for (const field of OBJECT_FIELDS) {
    if (call[field] !== undefined && !isPlainObject(call[field])) return fail(field, `${field} must be an object`);
  }
  for (const field of STRING_FIELDS) {
    if (call[field] !== undefined && typeof call[field] !== 'string') return fail(field, `${field} must be a string`);
  }
  const event = call['event'] as string | undefined;
  if (event !== undefined && event.length > MAX_EVENT_LENGTH)
    return fail('event', `event is ${event.length} characters; at most ${MAX_EVENT_LENGTH} are allowed`);
  const traits = call['traits'] as Record<string, unknown> | undefined;
  if (traits !== undefined) {
    for (const key of Object.keys(traits)) {
      if (key.length > MAX_TRAIT_KEY_LENGTH)
        return fail('traits', `traits has a key of ${key.length} characters; at most ${MAX_TRAIT_KEY_LENGTH} are allowed`);
    }
  }
  const messageId = call['messageId'];
  if (messageId !== undefined) {
    if (typeof messageId !== 'string' || messageId === '' || messageId.length > MAX_MESSAGE_ID_LENGTH) {
      return fail('messageId', `messageId must be a non-empty string of at most ${MAX_MESSAGE_ID_LENGTH} characters`);
    }
  }

  const hasIdentity = call['userId'] !== undefined || call['anonymousId'] !== undefined;
  switch (type) {
    case 'alias':
      if (call['userId'] === undefined) return fail('userId', 'alias requires userId');
      if (call['previousId'] === undefined) return fail('previousId', 'alias requires previousId');
      break;
    case 'track':
      if (typeof call['event'] !== 'string' || call['event'] === '') return fail('event', 'track requires event');
      if (!hasIdentity) return fail('userId', 'track requires userId or anonymousId');
      break;
    case 'group':
      if (call['groupId'] === undefined) return fail('groupId', 'group requires groupId');
      if (!hasIdentity) return fail('userId', 'group requires userId or anonymousId');
      break;
    case 'identify':
    case 'page':
    case 'screen':
      if (!hasIdentity) return fail('userId', `${type} requires userId or anonymousId`);
      break;
    default: {
      const unreachable: never = type;
      return fail('type', `unknown type ${String(unreachable)}`);
    }
  }
  return { ok: true, call };
}

function fail(field: string, message: string): { ok: false; problem: CallProblem } {
  return { ok: false, problem: { field, message } };
}
