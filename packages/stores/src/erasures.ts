/**
 * Deletion tombstones (docs/spec.md §6). A DELETE regulation cannot rewrite the delivery jobs other
 * processes hold (that would race with their workers), so it records, for each user and affected
 * source, when they were erased; webhook-delivery checks a job's calls against these before it
 * sends them, and drops those received at or before the erasure. One sorted set,
 * `<prefix>:reg:erased`: member = 22 base64url characters of sha256(sourceId "\n" userId), score =
 * the erasure time (epoch ms). The member is a digest because the tombstone outlives the rest of
 * the user's data by design: it must not be a copy of the user id. With shards, the count is also
 * copied to every shard (ShardCounts), so a delivery job reads it on its own shard.
 */
import { hash } from 'node:crypto';
import { asKeyspace, type Keyspace } from '@eventrelay/config';
import type { RedisClient } from '@eventrelay/runtime';
import { BATCH_TTL_S } from './call-batches.js';
import { profileKeys } from './profile-keys.js';
import { ShardCounts } from './shard-counts.js';

/**
 * How long a tombstone can still matter: the longest a call received before the erasure can wait in
 * a delivery job. A batch job's calls live at most BATCH_TTL_S (30 days) in their batch; after its
 * first round a call is retried for at most RETRY_WINDOW_MS (7 days at most). Older tombstones are
 * pruned, which also ends the lookups they cost webhook-delivery.
 */
const TOMBSTONE_MS = BATCH_TTL_S * 1000 + 7 * 86_400_000;

/** Members per ZADD: a regulation page is 500 users times the affected sources. */
const CHUNK = 1000;

interface ErasureSubject {
  readonly sourceId: string;
  readonly userId: string;
}

export class ErasureTombstones {
  private readonly key: string;
  private readonly copies: ShardCounts;

  constructor(
    private readonly redis: RedisClient,
    /** EVENTRELAY_PREFIX, or its shards (the count is then copied to each). */
    where: string | Keyspace,
  ) {
    const keys = asKeyspace(where);
    this.key = profileKeys(keys.home).erased;
    this.copies = new ShardCounts(redis, keys, 'erased');
  }

  /** Records that the users were erased from the sources at `at`; a later erasure of the same pair wins. */
  async record(sourceIds: readonly string[], userIds: readonly string[], at: number): Promise<void> {
    const args: (string | number)[] = [];
    for (const sourceId of sourceIds) for (const userId of userIds) args.push(at, member(sourceId, userId));
    for (let i = 0; i < args.length; i += 2 * CHUNK) await this.redis.zadd(this.key, 'GT', ...args.slice(i, i + 2 * CHUNK));
    // Before the regulation goes on: a delivery job reading its shard's copy afterwards sees them.
    await this.copies.publish((tx) => tx.zcard(this.key));
  }

  /**
   * How many tombstones there are: 0 means no call needs to be looked up. `shard`: the prefix of
   * the shard the reader's job is on, whose copy it reads (with shards).
   */
  async count(shard?: string): Promise<number> {
    return this.copies.copied && shard !== undefined ? this.copies.read(shard) : this.redis.zcard(this.key);
  }

  /** For each subject, when it was erased, or undefined. */
  async erasedAt(subjects: readonly ErasureSubject[]): Promise<(number | undefined)[]> {
    if (subjects.length === 0) return [];
    const scores = await this.redis.zmscore(this.key, ...subjects.map((s) => member(s.sourceId, s.userId)));
    return scores.map((s) => (s === null ? undefined : Number(s)));
  }

  /** Removes the tombstones that can no longer matter at `now`; returns how many. */
  async prune(now: number): Promise<number> {
    const pruned = await this.redis.zremrangebyscore(this.key, '-inf', `(${now - TOMBSTONE_MS}`);
    if (pruned > 0) await this.copies.publish((tx) => tx.zcard(this.key));
    return pruned;
  }
}

function member(sourceId: string, userId: string): string {
  return hash('sha256', `${sourceId}\n${userId}`, 'base64url').slice(0, 22);
}
