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

/** `limitRatio`: the share of maxmemory past which the intake refuses calls (0 < limitRatio ≤ 1). */
export function judgeMemory(memory: RedisMemory, limitRatio: number): MemoryVerdict {
  if (memory.max <= 0) return { kind: 'unbounded' };
  const ratio = memory.used / memory.max;
  return ratio >= limitRatio ? { kind: 'overloaded', ratio } : { kind: 'ok', ratio };
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
 * The verdict for several primaries (a Redis Cluster): the fullest one decides, since a write to
 * any shard on it would be refused. Undefined when there is none.
 */
export function fullestOf(verdicts: readonly MemoryVerdict[]): MemoryVerdict | undefined {
  let worst: MemoryVerdict | undefined;
  for (const v of verdicts) {
    if (worst === undefined || worst.kind === 'unbounded') worst = v;
    else if (v.kind !== 'unbounded' && v.ratio > worst.ratio) worst = v;
  }
  return worst;
}
