/**
 * Per-minute counters for the admin API's stats (GET /admin/v1/stats): what each destination
 * delivered, retried and dead-lettered, its attempts and their end-to-end lag, and what each source
 * had accepted and rejected, without Prometheus. Two resolutions, each a hash per bucket:
 *   `<prefix>:stats:1m:<epoch minute>`        kept 2 h (the last hour, at one-minute buckets)
 *   `<prefix>:stats:10m:<epoch 10 minutes>`   kept 25 h (the last day, at ten-minute buckets)
 * with the fields `d:<destinationId>:<delivered|retrying|dead|attempts|failed|lagSum|lagCount|lagMax>`
 * and `s:<sourceId>:<accepted|rejected>`. With shards (EVENTRELAY_SHARDS) a destination's counts
 * are in the buckets of its shard and a source's in those of its route shard (`<shard prefix>:stats:…`),
 * so the counting spreads over a cluster's nodes like the work it counts; readers merge the shards.
 *
 * Writers count in memory and flush at most every `flushMs` as ONE script call (EVALSHA) per shard
 * counted on, whatever was counted in between: the cost is per flush, never per call. A crash loses the last flush's
 * worth of counts: these are for people; the queue and the metrics are what is exact.
 */
import { asKeyspace, type Keyspace } from '@eventrelay/config';
import type { RedisClient } from '@eventrelay/runtime';
import { defineScript, execAll } from '@eventrelay/runtime';
import { WriteChain } from './write-chain.js';

export type StatsResolution = '1m' | '10m';

/** Bucket length and how long a bucket is kept after its last write. */
export const STATS_RESOLUTIONS: Readonly<Record<StatsResolution, { readonly bucketSeconds: number; readonly retentionSeconds: number }>> = {
  '1m': { bucketSeconds: 60, retentionSeconds: 2 * 3600 },
  '10m': { bucketSeconds: 600, retentionSeconds: 25 * 3600 },
};

function statsKey(prefix: string, resolution: StatsResolution, bucket: number): string {
  return `${prefix}:stats:${resolution}:${bucket}`;
}

/** What one settled delivery round (or part of one) adds to a destination's counts. */
export interface DestinationTally {
  readonly delivered?: number;
  readonly retrying?: number;
  readonly dead?: number;
  readonly attempts?: number;
  readonly failed?: number;
  /** End-to-end lag of each delivered call, ms. */
  readonly lagsMs?: readonly number[];
}

export interface SourceTally {
  readonly accepted?: number;
  readonly rejected?: number;
}

export interface StatsCountersOptions {
  /** Counts are written at most this often (and on flush/close). */
  readonly flushMs?: number;
  /** Which bucket a count falls in: the time it is counted. */
  readonly clock?: () => number;
  readonly onError?: (err: unknown) => void;
}

// KEYS: per minute counted, its 1m bucket then its 10m bucket. ARGV: the two TTLs (s), then per
// minute: how many increments, how many maxima, the increments' field/value pairs, the maxima's.
// A maximum is a compare-and-set, so writers in several processes keep the largest.
const ADD_STATS = `
local a = 3
for k = 1, #KEYS, 2 do
  local n = tonumber(ARGV[a])
  local m = tonumber(ARGV[a + 1])
  a = a + 2
  for i = 1, n do
    redis.call('HINCRBY', KEYS[k], ARGV[a], ARGV[a + 1])
    redis.call('HINCRBY', KEYS[k + 1], ARGV[a], ARGV[a + 1])
    a = a + 2
  end
  for i = 1, m do
    local v = tonumber(ARGV[a + 1])
    for j = k, k + 1 do
      local cur = tonumber(redis.call('HGET', KEYS[j], ARGV[a]))
      if not cur or v > cur then redis.call('HSET', KEYS[j], ARGV[a], v) end
    end
    a = a + 2
  end
  redis.call('EXPIRE', KEYS[k], ARGV[1])
  redis.call('EXPIRE', KEYS[k + 1], ARGV[2])
end
return 0
`;

interface StatsCommands {
  addStats(numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** The counts of one minute not yet written. */
interface Pending {
  readonly sums: Map<string, number>;
  readonly maxima: Map<string, number>;
}

export class StatsCounters {
  /** By shard prefix, then by minute. */
  private pending = new Map<string, Map<number, Pending>>();
  private timer: NodeJS.Timeout | undefined;
  private readonly writes: WriteChain;
  private readonly clock: () => number;
  private readonly scripts: StatsCommands;
  private readonly keys: Keyspace;

  constructor(
    private readonly redis: RedisClient,
    /** EVENTRELAY_PREFIX, or its shards. */
    where: string | Keyspace,
    private readonly options: StatsCountersOptions = {},
  ) {
    this.keys = asKeyspace(where);
    this.writes = new WriteChain(options.onError);
    this.clock = options.clock ?? Date.now;
    defineScript(redis, 'addStats', ADD_STATS);
    this.scripts = redis as unknown as StatsCommands;
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.options.flushMs ?? 1000);
    this.timer.unref();
  }

  countDestination(destinationId: string, tally: DestinationTally): void {
    const minute = this.minute(this.keys.destinationPrefix(destinationId));
    const field = (name: string) => `d:${destinationId}:${name}`;
    if (tally.delivered) add(minute.sums, field('delivered'), tally.delivered);
    if (tally.retrying) add(minute.sums, field('retrying'), tally.retrying);
    if (tally.dead) add(minute.sums, field('dead'), tally.dead);
    if (tally.attempts) add(minute.sums, field('attempts'), tally.attempts);
    if (tally.failed) add(minute.sums, field('failed'), tally.failed);
    const lags = tally.lagsMs ?? [];
    if (lags.length === 0) return;
    // HINCRBY takes integers: whole milliseconds.
    let sum = 0;
    let max = 0;
    for (const lag of lags) {
      const ms = Math.max(0, Math.round(lag));
      sum += ms;
      max = Math.max(max, ms);
    }
    add(minute.sums, field('lagSum'), sum);
    add(minute.sums, field('lagCount'), lags.length);
    minute.maxima.set(field('lagMax'), Math.max(minute.maxima.get(field('lagMax')) ?? 0, max));
  }

  countSource(sourceId: string, tally: SourceTally): void {
    const minute = this.minute(this.keys.sourcePrefix(sourceId));
    if (tally.accepted) add(minute.sums, `s:${sourceId}:accepted`, tally.accepted);
    if (tally.rejected) add(minute.sums, `s:${sourceId}:rejected`, tally.rejected);
  }

  /** Writes what is counted, in one command per shard; resolves when it is in Redis (or the write failed and was reported). */
  flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    const ttl = [STATS_RESOLUTIONS['1m'].retentionSeconds, STATS_RESOLUTIONS['10m'].retentionSeconds];
    const writes: (() => Promise<unknown>)[] = [];
    for (const [prefix, minutes] of batch) {
      const keys: string[] = [];
      const args: (string | number)[] = [];
      for (const [minute, counts] of minutes) {
        if (counts.sums.size === 0 && counts.maxima.size === 0) continue;
        keys.push(statsKey(prefix, '1m', minute), statsKey(prefix, '10m', Math.floor(minute / 10)));
        args.push(counts.sums.size, counts.maxima.size);
        for (const [field, n] of counts.sums) args.push(field, n);
        for (const [field, n] of counts.maxima) args.push(field, n);
      }
      if (keys.length > 0) writes.push(() => this.scripts.addStats(keys.length, ...keys, ...ttl, ...args));
    }
    return this.writes.add(writes);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /**
   * The raw fields of the given buckets of one resolution, in the order given (an empty object for
   * a bucket nothing was counted in, or that expired), read in one pipeline.
   */
  async read(resolution: StatsResolution, buckets: readonly number[]): Promise<Record<string, string>[]> {
    // One pipeline per shard (a pipeline stays within one slot on a cluster); an id's fields are
    // on one shard only, so the shards' buckets merge without adding.
    const shards = await Promise.all(
      this.keys.prefixes.map((prefix) => {
        const pipeline = this.redis.pipeline();
        for (const bucket of buckets) pipeline.hgetall(statsKey(prefix, resolution, bucket));
        return execAll(pipeline) as Promise<Record<string, string>[]>;
      }),
    );
    return buckets.map((_, i) => Object.assign({}, ...shards.map((shard) => shard[i])) as Record<string, string>);
  }

  private minute(prefix: string): Pending {
    const minute = Math.floor(this.clock() / 60_000);
    let minutes = this.pending.get(prefix);
    if (!minutes) this.pending.set(prefix, (minutes = new Map<number, Pending>()));
    let counts = minutes.get(minute);
    if (!counts) minutes.set(minute, (counts = { sums: new Map(), maxima: new Map() }));
    return counts;
  }
}

function add(sums: Map<string, number>, field: string, n: number): void {
  sums.set(field, (sums.get(field) ?? 0) + n);
}
