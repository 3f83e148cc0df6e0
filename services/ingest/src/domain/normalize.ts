/**
 * Turns a checked call into the NormalizedCall that goes on the queue (SPEC section 2):
 * messageId generated when absent, receivedAt = server time, originalTimestamp and sentAt parsed,
 * timestamp clock-skew corrected. Unknown keys travel as sent; the write key does not travel.
 * The checked copy is completed in place: it is the request's own, and copying again costs.
 */
import type { NormalizedCall } from '@eventrelay/config';
import type { CallType } from './routes.js';
import type { RawCall } from './validate.js';
import { correctedTimestamp, isoUtc, parseTimestamp } from './timestamps.js';

/** Per request: computed once, shared by every call of a batch. */
export interface NormalizeContext {
  readonly receivedAt: number;
  readonly receivedAtIso: string;
  /** The batch envelope's sentAt (epoch ms), used when the call has none of its own. */
  readonly envelopeSentAt: number | undefined;
  readonly newMessageId: () => string;
}

export function normalizeContext(receivedAt: number, envelopeSentAt: unknown, newMessageId: () => string): NormalizeContext {
  return { receivedAt, receivedAtIso: isoUtc(receivedAt), envelopeSentAt: parseTimestamp(envelopeSentAt), newMessageId };
}

/** `raw` is the call as sent (for its time fields); `checked` is what checkCall returned. */
export function normalizeCall(raw: RawCall, checked: RawCall, type: CallType, ctx: NormalizeContext): NormalizedCall {
  const original = parseTimestamp(raw['timestamp']) ?? parseTimestamp(raw['originalTimestamp']);
  const sentAt = parseTimestamp(raw['sentAt']) ?? ctx.envelopeSentAt;
  const timestamp = correctedTimestamp(ctx.receivedAt, original, sentAt);
  const normalized = checked as NormalizedCall;
  normalized.type = type;
  normalized.messageId = typeof checked['messageId'] === 'string' ? checked['messageId'] : ctx.newMessageId();
  normalized.timestamp = timestamp === ctx.receivedAt ? ctx.receivedAtIso : isoUtc(timestamp);
  normalized.receivedAt = ctx.receivedAtIso;
  if (original !== undefined) normalized.originalTimestamp = isoUtc(original);
  if (sentAt !== undefined) normalized.sentAt = isoUtc(sentAt);
  return normalized;
}
