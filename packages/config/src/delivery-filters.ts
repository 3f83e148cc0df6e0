/**
 * Which attempts and dead letters an operator's filter keeps (GET /admin/v1/destinations/:id/
 * deliveries and /dead-letters, and a replay by filter). Pure, so the stores that scan the logs
 * and the admin API that reads the query agree on one meaning.
 */
import type { DeadLetter, DeliveryAttempt } from './generated/contracts.js';

export interface AttemptFilter {
  /** `failed` is retryable or permanent. */
  readonly outcome?: DeliveryAttempt['outcome'] | 'failed' | undefined;
  /** `none`: no HTTP answer came (refused, reset, timed out, …). */
  readonly statusClass?: '2xx' | '3xx' | '4xx' | '5xx' | 'none' | undefined;
  readonly messageId?: string | undefined;
  /** Inclusive bounds on `at`, epoch ms. */
  readonly sinceMs?: number | undefined;
  readonly untilMs?: number | undefined;
}

export function attemptMatches(attempt: DeliveryAttempt, filter: AttemptFilter): boolean {
  if (filter.outcome !== undefined && !(filter.outcome === 'failed' ? attempt.outcome !== 'success' : attempt.outcome === filter.outcome))
    return false;
  if (filter.statusClass !== undefined) {
    const cls = attempt.status === undefined ? 'none' : `${Math.floor(attempt.status / 100)}xx`;
    if (cls !== filter.statusClass) return false;
  }
  if (filter.messageId !== undefined && attempt.messageId !== filter.messageId) return false;
  return withinBounds(attempt.at, filter.sinceMs, filter.untilMs);
}

export interface DeadLetterFilterOf {
  /** Case-insensitive substring of the messageId, event name, call type or last error. */
  readonly q?: string | undefined;
  /** Inclusive bounds on `deadAt`, epoch ms. */
  readonly sinceMs?: number | undefined;
  readonly untilMs?: number | undefined;
}

export function deadLetterMatches(letter: DeadLetter, filter: DeadLetterFilterOf): boolean {
  if (!withinBounds(letter.deadAt, filter.sinceMs, filter.untilMs)) return false;
  if (filter.q === undefined) return true;
  const q = filter.q.toLowerCase();
  const call = letter.job.call;
  const event = 'event' in call && typeof call.event === 'string' ? call.event : '';
  return [call.messageId, event, call.type, letter.lastError].some((text) => text.toLowerCase().includes(q));
}

/** True when a filter selects something narrower than everything. */
export function isFiltering(filter: AttemptFilter | DeadLetterFilterOf): boolean {
  return Object.values(filter).some((v) => v !== undefined);
}

function withinBounds(iso: string, sinceMs: number | undefined, untilMs: number | undefined): boolean {
  if (sinceMs === undefined && untilMs === undefined) return true;
  const at = Date.parse(iso);
  return (sinceMs === undefined || at >= sinceMs) && (untilMs === undefined || at <= untilMs);
}

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Epoch ms of an ISO 8601 instant, or undefined. Stricter than Date.parse, which reads a time
 * without a zone as the server's local time and rolls 2026-02-30 over into March.
 */
export function parseInstant(text: string): number | undefined {
  const m = INSTANT.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month - 1 ||
    date.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  )
    return undefined;
  return Date.parse(text);
}
