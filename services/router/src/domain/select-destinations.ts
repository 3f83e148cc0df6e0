/**
 * Which destinations get a call (docs/spec.md §3): every enabled destination connected to the
 * call's source, unless the call's `integrations` object says otherwise. Keys are destination
 * names or ids, case sensitive; `"All": false` turns every destination off unless its own key is on.
 * Every Webhooks destination shares the name `Webhooks`, so the id is what picks one of them (the
 * admin's test send sends `{"All": false, "<its id>": true}`).
 */
import type { Destination } from '@eventrelay/config';

/**
 * Whether `integrations` lets the call reach a destination named `name` (with id `id`). A
 * destination's own key (its id when the object has that key and the id is neither `All` nor the
 * name, else its name) decides when it is a
 * boolean or an options object (Segment's form for per-destination settings, which means on);
 * otherwise `All` decides, and everything is on by default.
 */
export function integrationAllows(integrations: Record<string, unknown> | undefined, name: string, id?: string): boolean {
  if (integrations === undefined) return true;
  // An id that is also `All` or a destination name would speak for more than its destination.
  const byId = id !== undefined && id !== 'All' && id !== name && Object.hasOwn(integrations, id);
  const own = integrations[byId ? id : name];
  if (own === false) return false;
  if (own === true || (typeof own === 'object' && own !== null)) return true;
  return integrations['All'] !== false;
}

/** `connected` are the enabled destinations connected to the call's source. */
export function selectDestinations(
  call: { readonly integrations?: Record<string, unknown> | undefined },
  connected: readonly Destination[],
): Destination[] {
  return connected.filter((d) => d.enabled && integrationAllows(call.integrations, d.name, d.id));
}
