/**
 * The destinations' drop and only rules at routing (docs/filters.md). A rule reads the route entry
 * when every field it tests is one the entry holds, else the whole call, which the router then
 * reads from the batch: most rules test type, event or userId, so most batches cost no extra read.
 */
import {
  ROUTE_ENTRY_CALL_FIELDS,
  filtersOf,
  type CallLike,
  type Destination,
  type NormalizedCall,
  type RouteEntry,
} from '@eventrelay/config';

/** How a destination's rules refused a call: a drop rule held, or an only rule did not. */
export type Refusal = 'drop' | 'only';

/** Whether the destination is enabled and has drop or only rules: routing must ask them. */
export function decides(destination: Destination): boolean {
  return destination.enabled && filtersOf(destination).decides;
}

/** Whether the destination's drop and only rules test a field the route entry does not hold. */
export function readsWholeCall(destination: Destination): boolean {
  if (!decides(destination)) return false;
  for (const root of filtersOf(destination).roots) if (!ROUTE_ENTRY_CALL_FIELDS.has(root)) return true;
  return false;
}

/**
 * The refusals of one call by the enabled destinations connected to its source (destination id →
 * how), or undefined when none refuses it. `wholeCall`: the call itself, when it was read.
 */
export function refusalsOf(
  entry: RouteEntry,
  connected: readonly Destination[],
  wholeCall: NormalizedCall | undefined,
): Map<string, Refusal> | undefined {
  let refusals: Map<string, Refusal> | undefined;
  for (const destination of connected) {
    if (!decides(destination)) continue;
    const decision = filtersOf(destination).decide((wholeCall ?? entry) as unknown as CallLike);
    if (!decision.send) (refusals ??= new Map()).set(destination.id, decision.reason);
  }
  return refusals;
}
