/**
 * What webhook-delivery keeps per destination for operators (SPEC section 4): a capped log of
 * attempts, newest first, and the dead letters. Both live under the key prefix so the admin API
 * (and a Redis Cluster hash tag) sees them the same way as everything else.
 */
import type { Redis } from 'ioredis';
import type { DeadLetter, DeliveryAttempt } from '@eventrelay/config';

export function deliveryKeys(prefix: string) {
  return {
    attempts: (destinationId: string) => `${prefix}:attempts:${destinationId}`,
    deadIndex: (destinationId: string) => `${prefix}:dead:${destinationId}`,
    deadData: (destinationId: string) => `${prefix}:dead-data:${destinationId}`,
  } as const;
}

export interface AttemptLogOptions {
  /** Entries kept per destination; older ones are trimmed. */
  readonly maxPerDestination: number;
  /** Attempts are written in batches at most this far apart. */
  readonly flushMs?: number;
  readonly onError?: (err: unknown) => void;
}

/**
 * Appends are batched (one LPUSH and one LTRIM per destination per flush) so that the log costs a
 * small fraction of a Redis command per attempt. A crash loses at most the last `flushMs` of log
 * entries, never a message: the log is for people, the queue is what guarantees delivery.
 */
export class AttemptLog {
  private readonly keys: ReturnType<typeof deliveryKeys>;
  private pending = new Map<string, string[]>();
  private size = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly options: AttemptLogOptions,
  ) {
    this.keys = deliveryKeys(prefix);
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.options.flushMs ?? 100);
    this.timer.unref();
  }

  record(attempt: DeliveryAttempt): void {
    const list = this.pending.get(attempt.destinationId);
    if (list) list.push(JSON.stringify(attempt));
    else this.pending.set(attempt.destinationId, [JSON.stringify(attempt)]);
    if (++this.size >= 1000) void this.flush();
  }

  /** Writes what is buffered; resolves when it is in Redis (or the write failed and was reported). */
  flush(): Promise<void> {
    if (this.size === 0) return this.flushing;
    const batch = this.pending;
    this.pending = new Map();
    this.size = 0;
    const pipeline = this.redis.pipeline();
    for (const [destinationId, entries] of batch) {
      const key = this.keys.attempts(destinationId);
      pipeline.lpush(key, ...entries);
      pipeline.ltrim(key, 0, this.options.maxPerDestination - 1);
    }
    this.flushing = this.flushing.then(() => pipeline.exec().then(() => undefined, (err: unknown) => this.options.onError?.(err)));
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /** Newest first. */
  async recent(destinationId: string, limit: number): Promise<DeliveryAttempt[]> {
    const entries = await this.redis.lrange(this.keys.attempts(destinationId), 0, limit - 1);
    return entries.map((e) => JSON.parse(e) as DeliveryAttempt);
  }
}

// Adds a dead letter and trims the oldest beyond the cap, in one step so the index and the data
// never disagree. KEYS: index, data. ARGV: jobId, score, json, max. Returns how many were evicted.
const ADD_DEAD_LETTER = `
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if over <= 0 then return 0 end
local evicted = redis.call('ZPOPMIN', KEYS[1], over)
for i = 1, #evicted, 2 do redis.call('HDEL', KEYS[2], evicted[i]) end
return over
`;

/**
 * Dead letters by destination: an index sorted by when the message died and the letters by job id.
 * Writing one is idempotent (keyed by job id), so a worker that dies after writing and before
 * finishing the job writes the same letter again when the job is picked up.
 */
export class DeadLetterStore {
  private readonly keys: ReturnType<typeof deliveryKeys>;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly maxPerDestination: number,
  ) {
    this.keys = deliveryKeys(prefix);
  }

  /** Returns how many older letters were evicted to stay under the cap. */
  async add(letter: DeadLetter): Promise<number> {
    const destinationId = letter.job.destinationId;
    const evicted = await this.redis.eval(ADD_DEAD_LETTER, 2, this.keys.deadIndex(destinationId), this.keys.deadData(destinationId), letter.jobId, Date.parse(letter.deadAt), JSON.stringify(letter), this.maxPerDestination);
    return Number(evicted);
  }

  /** Newest first. */
  async list(destinationId: string, limit: number, offset = 0): Promise<DeadLetter[]> {
    const ids = await this.redis.zrevrange(this.keys.deadIndex(destinationId), offset, offset + limit - 1);
    if (ids.length === 0) return [];
    const values = await this.redis.hmget(this.keys.deadData(destinationId), ...ids);
    return values.filter((v): v is string => v !== null).map((v) => JSON.parse(v) as DeadLetter);
  }
}
