/**
 * Turns a checked call into the NormalizedCall that goes on the queue (SPEC section 2):
 * messageId generated when absent, receivedAt = server time, originalTimestamp and sentAt parsed,
 * timestamp clock-skew corrected. Unknown keys travel as sent; the write key does not travel.
 */
import type { NormalizedCall } from '@eventrelay/config';
import type { CallType } from './routes.js';
import type { RawCall } from './validate.js';
import { correctedTimestamp, isoUtc, parseTimestamp } from './timestamps.js';

export interface NormalizeContext {
  readonly receivedAt: number;
  /** The batch envelope's sentAt, used when the call has none of its own. */
  readonly envelopeSentAt?: unknown;
  readonly newMessageId: () => string;
}

export function normalizeCall(call: RawCall, type: CallType, ctx: NormalizeContext): NormalizedCall {
  const { writeKey: _writeKey, timestamp: _ts, originalTimestamp: _ots, sentAt: _sent, receivedAt: _recv, ...rest } = call;
  const original = parseTimestamp(call['timestamp']) ?? parseTimestamp(call['originalTimestamp']);
  const sentAt = parseTimestamp(call['sentAt']) ?? parseTimestamp(ctx.envelopeSentAt);
  const normalized: NormalizedCall = {
    ...rest,
    type,
    messageId: typeof call['messageId'] === 'string' ? call['messageId'] : ctx.newMessageId(),
    timestamp: isoUtc(correctedTimestamp(ctx.receivedAt, original, sentAt)),
    receivedAt: isoUtc(ctx.receivedAt),
  };
  if (original !== undefined) normalized.originalTimestamp = isoUtc(original);
  if (sentAt !== undefined) normalized.sentAt = isoUtc(sentAt);
  return normalized;
}
