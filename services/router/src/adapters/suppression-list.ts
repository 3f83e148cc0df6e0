/**
 * Suppressed users (docs/spec.md §6). Each route job reads how many users are suppressed (HLEN,
 * O(1)) beside its own batch read, and only when someone is does it look its calls' distinct userIds
 * up with one HMGET. Nothing is cached between jobs: a suppression is in force for every route job
 * that reads after it was written (route.ts says why that is enough), and while nobody is
 * suppressed a route job pays one extra command sent in parallel with its batch read, never an
 * extra round trip. With shards the count is read from its copy on the route shard (ShardCounts),
 * so the hot path stays off the home slot's node.
 */
import type { Keyspace } from '@eventrelay/config';
import type { RedisClient } from '@eventrelay/runtime';
import { ShardCounts, configKeys } from '@eventrelay/stores';
import type { Suppression } from '../domain/suppression.js';

export class SuppressionList {
  private readonly key: string;
  private readonly copies: ShardCounts;

  constructor(
    private readonly redis: RedisClient,
    keys: Keyspace,
    /** The prefix of the route shard whose jobs this list serves. */
    private readonly shard: string,
    private readonly onProblem: (what: string, detail: Record<string, unknown>) => void,
  ) {
    this.key = configKeys(keys.home).suppressedUsers;
    this.copies = new ShardCounts(redis, keys, 'suppressed');
  }

  /** How many users are suppressed now. */
  async count(): Promise<number> {
    return this.copies.copied ? this.copies.read(this.shard) : this.redis.hlen(this.key);
  }

  /** Suppressions of the calls' users (one HMGET; none without a userId). */
  async lookup(calls: readonly { readonly userId?: string | undefined }[]): Promise<ReadonlyMap<string, Suppression>> {
    const found = new Map<string, Suppression>();
    const userIds = [...new Set(calls.map((c) => c.userId).filter((u): u is string => u !== undefined))];
    if (userIds.length === 0) return found;
    const values = await this.redis.hmget(this.key, ...userIds);
    values.forEach((value, i) => {
      if (value === null) return;
      const userId = userIds[i] as string;
      const entry = parseEntry(value);
      // An unreadable entry still suppresses (for every source, the safe reading of a privacy
      // request) rather than failing every route job that carries the user.
      if (entry === undefined) this.onProblem('suppressions.unreadable_entry', { userId });
      found.set(userId, entry ?? { allSources: true });
    });
    return found;
  }
}

function parseEntry(value: string): Suppression | undefined {
  try {
    const entry = JSON.parse(value) as { sourceIds?: unknown };
    if (entry === null || typeof entry !== 'object') return undefined;
    if (entry.sourceIds === undefined) return { allSources: true };
    if (!Array.isArray(entry.sourceIds) || !entry.sourceIds.every((s) => typeof s === 'string')) return undefined;
    return entry.sourceIds.length > 0 ? { allSources: false, sourceIds: entry.sourceIds } : { allSources: true };
  } catch {
    return undefined;
  }
}
