/**
 * SUPPRESS regulations (docs/spec.md §6) drop a user's future calls here, before any delivery job
 * exists. A regulation covers the sources it lists, or every source when it lists none.
 */
/** What a suppression says about one userId: every source, or only these. */
export type Suppression = { readonly allSources: true } | { readonly allSources: false; readonly sourceIds: readonly string[] };

export function isSuppressed(
  call: { readonly userId?: string | undefined },
  sourceId: string,
  suppression: Suppression | undefined,
): boolean {
  if (suppression === undefined || call.userId === undefined) return false;
  return suppression.allSources || suppression.sourceIds.includes(sourceId);
}
