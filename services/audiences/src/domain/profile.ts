/**
 * A user's profile as the audiences feature reads it: per source, the merged traits of its
 * identify calls and per-event counters of its track calls in UTC day buckets. Stored as one Redis
 * hash per user (adapters/profile-store.ts writes it); this module only reads the fields. Pure.
 *
 * Fields: `v` version (bumped by every applied call) · `ids` digests of the latest messageIds (a
 * retried job applies a call once) · `ta:<source>` epoch ms of the source's latest identify ·
 * `t:<source>:<trait>` a trait's JSON value · `e:<source>:<event>` "total day:count …" ·
 * plus the counters the store keeps for its caps (`tb:`, `en:`).
 */

export const DAY_MS = 86_400_000;

/** Days since 1970-01-01 UTC. */
export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

export interface EventCounter {
  readonly total: number;
  /** UTC day → count, for the days still kept. */
  readonly days: ReadonlyMap<number, number>;
}

export interface SourceProfile {
  /** Epoch ms of the source's latest identify (0 when it sent none). */
  traitsAt: number;
  readonly traits: Map<string, unknown>;
  readonly events: Map<string, EventCounter>;
}

export interface Profile {
  readonly userId: string;
  readonly version: number;
  readonly sources: ReadonlyMap<string, SourceProfile>;
}

/** A profile from its hash fields (HGETALL); undefined when the user has none. */
export function parseProfile(userId: string, fields: Record<string, string>): Profile | undefined {
  const version = Number(fields['v']);
  if (!Number.isSafeInteger(version) || version <= 0) return undefined;
  const sources = new Map<string, SourceProfile>();
  const source = (id: string) => {
    let s = sources.get(id);
    if (!s) sources.set(id, (s = { traitsAt: 0, traits: new Map(), events: new Map() }));
    return s;
  };
  for (const [field, value] of Object.entries(fields)) {
    const kind = field.slice(0, field.indexOf(':'));
    const rest = field.slice(kind.length + 1);
    // Source ids hold no ":", so the first one after the kind ends the source id.
    const cut = rest.indexOf(':');
    const sourceId = cut < 0 ? rest : rest.slice(0, cut);
    const name = rest.slice(cut + 1);
    if (kind === 'ta') source(sourceId).traitsAt = Number(value);
    else if (kind === 't' && cut >= 0) source(sourceId).traits.set(name, parseJson(value));
    else if (kind === 'e' && cut >= 0) source(sourceId).events.set(name, parseCounter(value));
  }
  return { userId, version, sources };
}

/** "total day:count day:count …" */
export function parseCounter(value: string): EventCounter {
  const [total, ...buckets] = value.split(' ');
  const days = new Map<number, number>();
  for (const b of buckets) {
    const [day, count] = b.split(':');
    days.set(Number(day), Number(count));
  }
  return { total: Number(total), days };
}

function parseJson(value: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** What an audience over `sourceIds` sees of a profile. */
export interface ProfileView {
  trait(key: string): { readonly set: boolean; readonly value?: unknown };
  /** Calls of the event; within the current UTC day and the `withinDays - 1` before it when given. */
  eventCount(name: string, today: number, withinDays?: number): number;
}

/**
 * The profile as seen through the audience's sources: traits merged with the source whose latest
 * identify is newest winning per key, event counts summed. Undefined when none of the sources
 * has told anything about the user: such a user is no candidate (a `not` condition would
 * otherwise make every user of every other source a member).
 */
export function viewThrough(profile: Profile, sourceIds: readonly string[]): ProfileView | undefined {
  const parts = sourceIds
    .map((id) => profile.sources.get(id))
    .filter((s): s is SourceProfile => s !== undefined && (s.traits.size > 0 || s.events.size > 0));
  if (parts.length === 0) return undefined;
  const byAge = [...parts].sort((a, b) => a.traitsAt - b.traitsAt);
  const traits = new Map<string, unknown>();
  for (const p of byAge) for (const [k, v] of p.traits) traits.set(k, v);
  return {
    trait: (key) => (traits.has(key) ? { set: true, value: traits.get(key) } : { set: false }),
    eventCount(name, today, withinDays) {
      let n = 0;
      for (const p of parts) {
        const counter = p.events.get(name);
        if (!counter) continue;
        if (withinDays === undefined) n += counter.total;
        else for (const [day, count] of counter.days) if (day <= today && day > today - withinDays) n += count;
      }
      return n;
    },
  };
}
