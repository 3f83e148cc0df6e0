/**
 * What one route job (a call batch) becomes: per selected destination, the batch's calls bound
 * for it (by reference, grouped by source: one delivery job each), what the audiences service
 * needs of the identify and track calls (per source, for the sources some audience reads), and a
 * count of the calls dropped on the way and why, for the log line and the metrics. Works on the batch's route entries only: the
 * calls themselves stay in Redis until webhook-delivery reads them.
 */
import type { Destination, ProfileCall, RouteEntry } from '@eventrelay/config';
import type { Refusal } from './filtering.js';
import { selectDestinations } from './select-destinations.js';
import { isSuppressed, type Suppression } from './suppression.js';

/** One destination's share of the batch: its calls, by source (BatchRef parts). */
interface PlannedDelivery {
  readonly destinationId: string;
  readonly parts: { readonly part: number; readonly sourceId: string; readonly indexes: number[] }[];
}

export interface RoutePlan {
  /** One per destination that gets at least one call, in the order destinations were first met. */
  readonly deliveries: PlannedDelivery[];
  /** (call, destination) pairs: what the deliveries hold in all. */
  readonly routedPairs: number;
  readonly suppressed: number;
  /** Calls that no destination takes (none connected, or `integrations` or filters turned them all off). */
  readonly unrouted: number;
  /** (call, enabled connected destination) pairs that a call's `integrations` turned off. */
  readonly turnedOff: number;
  /** (call, destination) pairs the destination's filters refused, by how: a drop rule held, or an only rule did not. */
  readonly filtered: { readonly drop: number; readonly only: number };
  /** Destinations per call, in entry order (0 for a suppressed or unrouted call). */
  readonly fanout: number[];
  /**
   * Identify and track calls with a userId, for profiles, by source: only of the sources some
   * audience reads; suppressed users' calls are not here.
   */
  readonly profiles: { readonly sourceId: string; readonly calls: ProfileCall[] }[];
}

/**
 * `connected(sourceId)`: the destinations connected to a source (enabled or not). `audienceSources`:
 * the sources some audience reads. A profile costs Redis a few hundred bytes to kilobytes for up to
 * AUDIENCES_PROFILE_TTL_DAYS, and only an audience ever reads it: a source no audience reads feeds
 * none, so a flood of userIds through its (public, for a browser source) write key keeps nothing
 * there. An audience created later gathers from then on (docs/audiences.md). `refusedBy(entry,
 * destination)`: how that destination's drop and only rules refused the call, if they did
 * (filtering.ts; decided ahead, a slice at a time); left out when no destination has such rules.
 */
export function planRoute(
  entries: readonly RouteEntry[],
  connected: (sourceId: string) => readonly Destination[],
  suppressions: ReadonlyMap<string, Suppression>,
  audienceSources: ReadonlySet<string>,
  refusedBy?: (entry: RouteEntry, destination: Destination) => Refusal | undefined,
): RoutePlan {
  type Part = PlannedDelivery['parts'][number];
  const byDestination = new Map<string, Map<number, Part>>();
  const profiles = new Map<string, ProfileCall[]>();
  let routedPairs = 0;
  let suppressed = 0;
  let unrouted = 0;
  let turnedOff = 0;
  const filtered = { drop: 0, only: 0 };
  const fanout: number[] = [];
  // A batch holds the calls of a few sources: look each one's destinations up once.
  const sources = new Map<string, { destinations: readonly Destination[]; enabled: number }>();
  const sourceOf = (sourceId: string) => {
    let source = sources.get(sourceId);
    if (!source) {
      const destinations = connected(sourceId);
      sources.set(sourceId, (source = { destinations, enabled: destinations.filter((d) => d.enabled).length }));
    }
    return source;
  };
  const passes = (refused: NonNullable<typeof refusedBy>, d: Destination, entry: RouteEntry): boolean => {
    const refusal = refused(entry, d);
    if (refusal !== undefined) filtered[refusal]++;
    return refusal === undefined;
  };
  for (const entry of entries) {
    if (isSuppressed(entry, entry.sourceId, entry.userId === undefined ? undefined : suppressions.get(entry.userId))) {
      suppressed++;
      fanout.push(0);
      continue;
    }
    const profileCall = audienceSources.has(entry.sourceId) ? toProfileCall(entry) : undefined;
    if (profileCall) {
      const list = profiles.get(entry.sourceId);
      if (list) list.push(profileCall);
      else profiles.set(entry.sourceId, [profileCall]);
    }
    const source = sourceOf(entry.sourceId);
    const selected = selectDestinations(entry, source.destinations);
    turnedOff += source.enabled - selected.length;
    const targets = refusedBy ? selected.filter((d) => passes(refusedBy, d, entry)) : selected;
    if (targets.length === 0) unrouted++;
    fanout.push(targets.length);
    routedPairs += targets.length;
    for (const d of targets) {
      let parts = byDestination.get(d.id);
      if (!parts) byDestination.set(d.id, (parts = new Map<number, Part>()));
      const part = parts.get(entry.part);
      if (part) part.indexes.push(entry.index);
      else parts.set(entry.part, { part: entry.part, sourceId: entry.sourceId, indexes: [entry.index] });
    }
  }
  return {
    deliveries: [...byDestination].map(([destinationId, parts]) => ({ destinationId, parts: [...parts.values()] })),
    routedPairs,
    suppressed,
    unrouted,
    turnedOff,
    filtered,
    fanout,
    profiles: [...profiles].map(([sourceId, calls]) => ({ sourceId, calls })),
  };
}

// Anonymous calls feed no profile: audiences are delivered by userId (identity resolution of
// anonymousIds is out of scope, docs/audiences.md).
function toProfileCall(entry: RouteEntry): ProfileCall | undefined {
  if (entry.userId === undefined || entry.userId === '') return undefined;
  const base = { messageId: entry.messageId, userId: entry.userId, timestamp: entry.timestamp };
  if (entry.type === 'identify') return { type: 'identify', ...base, ...(entry.traits ? { traits: entry.traits } : {}) };
  if (entry.type === 'track' && entry.event !== undefined) return { type: 'track', ...base, event: entry.event };
  return undefined;
}
