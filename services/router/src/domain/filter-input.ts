/**
 * What a destination's drop and only rules read of a call (docs/filters.md): the route entry
 * when every field they test is one the entry holds, else the whole call, which the router then
 * reads from the batch. Most rules test type, event or userId, so most batches cost no extra read.
 */
import { filtersOf, type CallLike, type Destination, type NormalizedCall, type RouteEntry } from '@eventrelay/config';

/** The call fields a route entry holds as the call has them (call-batch.schema.json); traits only for some identifies. */
const ENTRY_FIELDS: ReadonlySet<string> = new Set(['type', 'userId', 'event', 'messageId', 'timestamp', 'integrations']);

/** Whether the destination's drop and only rules test a field the route entry does not hold. */
export function readsWholeCall(destination: Destination): boolean {
  const filters = filtersOf(destination);
  if (!filters.decides || !destination.enabled) return false;
  for (const root of filters.roots) if (!ENTRY_FIELDS.has(root)) return true;
  return false;
}

/** The call a rule tests: the whole call when it was read, else the entry. */
export function filterInput(entry: RouteEntry, wholeCall: NormalizedCall | undefined): CallLike {
  return (wholeCall ?? entry) as unknown as CallLike;
}
