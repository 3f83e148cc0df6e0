/**
 * Lenient timestamp parsing (docs/spec.md §2): RFC 3339, ISO 8601 without a colon in the offset as
 * Go v2 clients send (`2016-04-26T11:14:48-0700`), fractions of any length, a space for the `T`.
 * A value without an offset is taken as UTC. Anything else counts as absent, never as an error:
 * a bad client clock must not cost the call.
 */
const ISO = /^(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** Years 0000 to 9999: beyond them ISO 8601 needs a six-digit signed year that receivers may not parse. */
const MIN_EPOCH_MS = Date.parse('0000-01-01T00:00:00.000Z');
const MAX_EPOCH_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** Epoch milliseconds, or undefined when the value is not a timestamp we understand. */
export function parseTimestamp(value: unknown): number | undefined {
  if (typeof value !== 'string' || value.length > 64) return undefined;
  const m = ISO.exec(value.trim());
  if (!m) return undefined;
  const [, date, time = '00:00:00', fraction = '', zone = 'Z'] = m;
  const hms = time.length === 5 ? `${time}:00` : time;
  const ms = (fraction + '000').slice(0, 3);
  const offset = zone === 'Z' || zone === 'z' ? 'Z' : `${zone.slice(0, 3)}:${zone.length > 3 ? zone.slice(-2) : '00'}`;
  if (date === undefined || !isRealDay(date)) return undefined;
  const epoch = Date.parse(`${date}T${hms}.${ms}${offset}`);
  return Number.isFinite(epoch) ? epoch : undefined;
}

/** Date.parse rolls 30 February into March; a day that does not exist is no timestamp. */
function isRealDay(date: string): boolean {
  const year = Number(date.slice(0, 4));
  const month = Number(date.slice(5, 7));
  const day = Number(date.slice(8, 10));
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= days;
}

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The value as ISO 8601 UTC with milliseconds: as sent when already so written, else re-formatted. */
export function canonicalIso(value: unknown, epochMs: number): string {
  return typeof value === 'string' && CANONICAL.test(value) && isRealDay(value.slice(0, 10)) && value.slice(11, 13) < '24'
    ? value
    : isoUtc(epochMs);
}

/** ISO 8601 UTC with milliseconds, e.g. 2026-11-21T09:30:00.000Z. */
export function isoUtc(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/**
 * Clock-skew correction: the time the call took from its client's clock to ours is taken as the
 * client clock's error. `timestamp = receivedAt - (sentAt - originalTimestamp)`.
 */
export function correctedTimestamp(receivedAt: number, originalTimestamp: number | undefined, sentAt: number | undefined): number {
  if (originalTimestamp === undefined) return receivedAt;
  if (sentAt === undefined) return originalTimestamp;
  const corrected = receivedAt - (sentAt - originalTimestamp);
  // Absurd client clocks can push the result outside four-digit years.
  return corrected >= MIN_EPOCH_MS && corrected <= MAX_EPOCH_MS ? corrected : originalTimestamp;
}
