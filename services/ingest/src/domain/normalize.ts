/**
 * Turns a checked call into the NormalizedCall that goes on the queue (docs/spec.md §2):
 * messageId generated when absent, receivedAt = server time, originalTimestamp and sentAt parsed,
 * timestamp clock-skew corrected. Unknown keys travel as sent; the write key does not travel.
 * The checked copy is completed in place: it is the request's own, and copying again costs.
 */
import type { NormalizedCall } from '@eventrelay/config';
import type { CallType } from './routes.js';
import type { RawCall } from './validate.js';
import { canonicalIso, correctedTimestamp, isoUtc, parseTimestamp } from './timestamps.js';

/** Per request: computed once, shared by every call of a batch. */
export interface NormalizeContext {
  readonly receivedAt: number;
  readonly receivedAtIso: string;
  /** The batch envelope's sentAt (epoch ms), used when the call has none of its own. */
  readonly envelopeSentAt: number | undefined;
  readonly envelopeSentAtIso: string | undefined;
  readonly newMessageId: () => string;
}

export function normalizeContext(receivedAt: number, envelopeSentAt: unknown, newMessageId: () => string): NormalizeContext {
  const sentAt = parseTimestamp(envelopeSentAt);
  return {
    receivedAt,
    receivedAtIso: isoUtc(receivedAt),
    envelopeSentAt: sentAt,
    envelopeSentAtIso: sentAt === undefined ? undefined : canonicalIso(envelopeSentAt, sentAt),
    newMessageId,
  };
}

/** `raw` is the call as sent (for its time fields); `checked` is what checkCall returned. */
export function normalizeCall(raw: RawCall, checked: RawCall, type: CallType, ctx: NormalizeContext): NormalizedCall {
  const fromTimestamp = parseTimestamp(raw['timestamp']);
  const originalText = fromTimestamp !== undefined ? raw['timestamp'] : raw['originalTimestamp'];
  const original = fromTimestamp ?? parseTimestamp(raw['originalTimestamp']);
  const ownSentAt = parseTimestamp(raw['sentAt']);
  const sentAt = ownSentAt ?? ctx.envelopeSentAt;
  const timestamp = correctedTimestamp(ctx.receivedAt, original, sentAt);
  const normalized = checked as NormalizedCall;
  normalized.type = type;
  normalized.messageId = typeof checked['messageId'] === 'string' ? checked['messageId'] : ctx.newMessageId();
  // Formatting dates is a measurable share of intake CPU: reuse strings already in canonical form.
  const originalIso = original === undefined ? undefined : canonicalIso(originalText, original);
  normalized.timestamp =
    timestamp === ctx.receivedAt ? ctx.receivedAtIso : timestamp === original && originalIso ? originalIso : isoUtc(timestamp);
  normalized.receivedAt = ctx.receivedAtIso;
  if (originalIso !== undefined) normalized.originalTimestamp = originalIso;
  if (ownSentAt !== undefined) normalized.sentAt = canonicalIso(raw['sentAt'], ownSentAt);
  else if (ctx.envelopeSentAtIso !== undefined) normalized.sentAt = ctx.envelopeSentAtIso;
  return normalized;
}
