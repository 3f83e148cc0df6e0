/**
 * The Redis memory guard (docs/intake.md, "Back-pressure"): with `noeviction`, a full Redis refuses
 * every write, for every source, and the router and deliveries with it. The intake stops taking new
 * calls a little before that, so what is already stored can still be routed, delivered and freed.
 * Pure: the adapter samples `INFO memory` and asks these functions.
 */

export interface RedisMemory {
  /** `used_memory`, bytes. */
  readonly used: number;
  /** `maxmemory`, bytes; 0 = no limit. */
  readonly max: number;
}

export type MemoryVerdict =
  /** No maxmemory: Redis never refuses a write for memory, so there is nothing to guard. */
  | { readonly kind: 'unbounded' }
  | { readonly kind: 'ok'; readonly ratio: number }
  | { readonly kind: 'overloaded'; readonly ratio: number };

/**
 * The most one flush of one ingest process adds to Redis: its calls as sent (up to 1 MB, plus the
 * request that reached it, up to 500 KB) and per call a route entry and a dedupe claim (up to 3,500
 * calls at about 400 B): about 3 MB. Written before the guard can hear of it, it must always fit.
 */
export const FLUSH_HEADROOM_BYTES = 3 * 1024 * 1024;

/** What a stored request adds to Redis, roughly: its calls as sent, and per call its route entry and dedupe claim. */
export function storedBytesOf(bodyBytes: number, calls: number): number {
  return bodyBytes + calls * 400;
}

/**
 * `limitRatio`: the share of maxmemory past which the intake refuses calls (0 < limitRatio ≤ 1).
 * `unseenBytes`: what this process stored since `memory` was sampled, counted as if it were there
 * already, so a flood cannot write past the limit between two samples. `headroomBytes`: room kept
 * below maxmemory whatever the ratio (FLUSH_HEADROOM_BYTES: a flush in flight always fits).
 */
export function judgeMemory(memory: RedisMemory, limitRatio: number, unseenBytes = 0, headroomBytes = 0): MemoryVerdict {
  if (memory.max <= 0) return { kind: 'unbounded' };
  const ratio = memory.used / memory.max;
  const limit = Math.min(limitRatio * memory.max, memory.max - headroomBytes);
  return memory.used + unseenBytes >= limit ? { kind: 'overloaded', ratio } : { kind: 'ok', ratio };
}

/** `used_memory` and `maxmemory` from the text of `INFO memory`, or undefined when either is missing. */
export function parseInfoMemory(info: string): RedisMemory | undefined {
  let used: number | undefined;
  let max: number | undefined;
  for (const line of info.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon);
    if (name !== 'used_memory' && name !== 'maxmemory') continue;
    const value = Number(line.slice(colon + 1).trim());
    if (!Number.isFinite(value)) continue;
    if (name === 'used_memory') used = value;
    else max = value;
  }
  return used === undefined || max === undefined ? undefined : { used, max };
}

/**
 * The verdict for several primaries (a Redis Cluster): overloaded when any one is, since a write to
 * any shard on it would be refused, with the highest ratio. Undefined when there is none.
 */
export function fullestOf(verdicts: readonly MemoryVerdict[]): MemoryVerdict | undefined {
  let worst: MemoryVerdict | undefined;
  let overloaded = false;
  for (const v of verdicts) {
    if (v.kind === 'overloaded') overloaded = true;
    if (worst === undefined || worst.kind === 'unbounded') worst = v;
    else if (v.kind !== 'unbounded' && v.ratio > worst.ratio) worst = v;
  }
  return worst?.kind === 'ok' && overloaded ? { kind: 'overloaded', ratio: worst.ratio } : worst;
}
