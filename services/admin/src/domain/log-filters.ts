/**
 * The filters of the attempt log and dead-letter list, read from a request: times are checked
 * here (the schema only bounds their length), so a bad one is a 400 naming its field.
 */
import {
  RequestError,
  parseInstant,
  type AttemptFilter,
  type DeadLetterFilter,
  type DeadLetterFilterOf,
  type DeliveriesQuery,
} from '@eventrelay/config';

const INSTANT_PROBLEM = 'must be an ISO 8601 date and time with a zone, e.g. 2026-11-21T09:00:00Z';

export function attemptFilter(query: DeliveriesQuery): AttemptFilter {
  const { sinceMs, untilMs } = timeBounds(query, '');
  return { outcome: query.status, statusClass: query.statusClass, messageId: query.messageId, sinceMs, untilMs };
}

/** `prefix` names the object the fields are in (`filter.` for a replay's). */
export function deadLetterFilter(filter: DeadLetterFilter, prefix = ''): DeadLetterFilterOf {
  return { q: filter.q, ...timeBounds(filter, prefix) };
}

/** Epoch ms of a time field, or a 400 naming it. */
export function instantField(text: string, field: string): number {
  const ms = parseInstant(text);
  if (ms === undefined) throw new RequestError('invalid_request', `${field} ${INSTANT_PROBLEM}`, [{ field, message: INSTANT_PROBLEM }]);
  return ms;
}

function timeBounds(bounds: { since?: string | undefined; until?: string | undefined }, prefix: string) {
  const problems: { field: string; message: string }[] = [];
  const read = (text: string | undefined, name: string) => {
    if (text === undefined) return undefined;
    const ms = parseInstant(text);
    if (ms === undefined) problems.push({ field: `${prefix}${name}`, message: INSTANT_PROBLEM });
    return ms;
  };
  const sinceMs = read(bounds.since, 'since');
  const untilMs = read(bounds.until, 'until');
  if (problems.length > 0) throw new RequestError('invalid_request', problems.map((p) => `${p.field} ${p.message}`).join('; '), problems);
  return { sinceMs, untilMs };
}
