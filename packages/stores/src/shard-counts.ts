/**
 * A count kept in the home slot (how many users are suppressed, how many deletion tombstones there
 * are), copied to every shard (EVENTRELAY_SHARDS > 1). The hot path reads the count once per job
 * only to learn whether a lookup is needed; on a Redis Cluster the home slot is one node, so the
 * copy on the job's own shard keeps that read off it. Each change of the count is published with a
 * version taken with the count in one step, and a shard keeps only a newer version: two writers
 * publishing at once can never leave a shard with the older count. With one shard there is no
 * copy: readers count the home key itself.
 */
import type { Keyspace } from '@eventrelay/config';
import { defineScript, type RedisClient } from '@eventrelay/runtime';

// KEYS: the shard's copies hash. ARGV: name, version, count. Keeps the count of a newer version only.
const KEEP_NEWER = `
if tonumber(redis.call('HGET', KEYS[1], ARGV[1] .. ':v') or '0') >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3], ARGV[1] .. ':v', ARGV[2])
return 1
`;

export class ShardCounts {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
    /** Which count: a field name in each shard's copies hash. */
    private readonly name: string,
  ) {
    defineScript(redis, 'keepNewerCount', KEEP_NEWER);
  }

  /** Whether there are copies at all (more than one shard). */
  get copied(): boolean {
    return this.keys.shards > 1;
  }

  /**
   * Copies the count to every shard. `count` is a command on the home slot that returns the count;
   * it runs in one MULTI with the version's increment.
   */
  async publish(count: (tx: ReturnType<RedisClient['multi']>) => void): Promise<void> {
    if (!this.copied) return;
    const tx = this.redis.multi().incr(`${this.keys.home}:copies:${this.name}:v`);
    count(tx);
    const [[, version], [, n]] = (await tx.exec()) as [[unknown, number], [unknown, number]];
    const script = this.redis as unknown as { keepNewerCount(...args: (string | number)[]): Promise<number> };
    await Promise.all(this.keys.prefixes.map((p) => script.keepNewerCount(1, `${p}:copies`, this.name, version, n)));
  }

  /** The copy on the shard of `prefix` (0 before anything was published). */
  async read(prefix: string): Promise<number> {
    return Number((await this.redis.hget(`${prefix}:copies`, this.name)) ?? 0);
  }
}
