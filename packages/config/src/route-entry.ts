/**
 * What the router needs of a call (call-batch.schema.json): ingest stores it beside the call, so
 * routing reads a few dozen bytes per call instead of the whole call. Traits go along only where a
 * profile takes them (identify calls with a userId); properties and context never do.
 */
import type { NormalizedCall, RouteEntry } from './generated/contracts.js';

/**
 * The call fields a route entry holds as the call has them (traits only for some identifies, so
 * not among them): a filter testing only these is decided from the entry, without the call.
 */
export const ROUTE_ENTRY_CALL_FIELDS: ReadonlySet<string> = new Set(['type', 'userId', 'event', 'messageId', 'timestamp', 'integrations']);

/** `index`: the call's number in its flush; `part`: the number of the first call of its source in that flush. */
export function routeEntryOf(call: NormalizedCall, sourceId: string, index: number, part: number): RouteEntry {
  const entry: RouteEntry = { index, part, sourceId, messageId: call.messageId, type: call.type, timestamp: call.timestamp };
  if (call.userId !== undefined) entry.userId = call.userId;
  if (call.integrations !== undefined) entry.integrations = call.integrations;
  // Any call may carry an `event` (unknown keys travel as sent), and filters test it from here.
  if (typeof call.event === 'string') entry.event = call.event;
  if (call.type === 'identify' && call.userId !== undefined && call.userId !== '' && call.traits !== undefined) entry.traits = call.traits;
  return entry;
}
