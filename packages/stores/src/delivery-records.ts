/**
 * What webhook-delivery keeps per destination for operators (docs/spec.md §4): a capped log of
 * attempts, newest first, and the dead letters. Both live under the key prefix so the admin API
 * (and a Redis Cluster hash tag) sees them the same way as everything else.
 */
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '@eventrelay/runtime';
import {
  attemptMatches,
  deadLetterMatches,
  isFiltering,
  type AttemptFilter,
  type DeadLetter,
  type DeadLetterFilterOf,
  type DeliveryAttempt,
  type Keyspace,
  asKeyspace,
} from '@eventrelay/config';
import { BatchedCappedLog, readCapped, type CappedPage } from './capped-log.js';
import { defineScript } from '@eventrelay/runtime';

/**
 * The keys of a destination's records, on the shard of the destination (its deliver jobs' slot, so
 * a job's commit stays one MULTI); `where` is EVENTRELAY_PREFIX alone when there is one shard.
 */
export function deliveryKeys(where: string | Keyspace) {
  const keys = asKeyspace(where);
  const at = (destinationId: string) => keys.destinationPrefix(destinationId);
  return {
    attempts: (destinationId: string) => `${at(destinationId)}:attempts:${destinationId}`,
    deadIndex: (destinationId: string) => `${at(destinationId)}:dead:${destinationId}`,
    deadData: (destinationId: string) => `${at(destinationId)}:dead-data:${destinationId}`,
    /** messageId → job id of its dead letter, for replaying given messageIds. */
    deadByMessage: (destinationId: string) => `${at(destinationId)}:dead-by-message:${destinationId}`,
    /** Set while the destination's dead letters are at their cap and the oldest are being evicted. */
    deadEvicting: (destinationId: string) => `${at(destinationId)}:dead-evicting:${destinationId}`,
    /** Per shard, destinationId → calls held in deliver jobs for a retry (see RetryBacklog); no field at 0. */
    retryHeld: (destinationId: string) => `${at(destinationId)}:retry-held`,
    /** Every shard's retryHeld hash. */
    retryHeldAll: keys.prefixes.map((prefix) => `${prefix}:retry-held`),
    /** Set while the destination's retry backlog is at its cap and calls beyond it are dead-lettered. */
    retryCapping: (destinationId: string) => `${at(destinationId)}:retry-capping:${destinationId}`,
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
 * The attempt log. Appends are batched (see BatchedCappedLog): the log is for people, the queue is
 * what guarantees delivery.
 */
export class AttemptLog {
  private readonly keys: ReturnType<typeof deliveryKeys>;
  private readonly log: BatchedCappedLog<DeliveryAttempt>;

  constructor(
    private readonly redis: RedisClient,
    prefix: string | Keyspace,
    options: AttemptLogOptions,
  ) {
    this.keys = deliveryKeys(prefix);
    this.log = new BatchedCappedLog(redis, { max: options.maxPerDestination, flushMs: options.flushMs, onError: options.onError });
    defineScript(redis, 'eraseAttemptBodies', ERASE_ATTEMPT_BODIES);
  }

  start(): void {
    this.log.start();
  }

  /**
   * A deletion regulation: the entries of these users' calls from these sources keep their
   * outcome, status, latency and headers, and lose their userId and both bodies (`erased: true`).
   * Replaced in place, so page cursors stay valid. Returns how many entries were erased.
   */
  async eraseUsers(destinationId: string, sourceIds: readonly string[], userIds: readonly string[]): Promise<number> {
    if (sourceIds.length === 0 || userIds.length === 0) return 0;
    const script = this.redis as unknown as EraseAttemptBodies;
    // In slices, so no script holds Redis for long however large DELIVERY_LOG_MAX_PER_DESTINATION
    // is. New entries go on at the head and trimming takes from the tail, so an entry can only move
    // further down the list between slices: it may be read twice, never skipped.
    let erased = 0;
    for (let start = 0; ; start += ERASE_SLICE) {
      const answer = (await script.eraseAttemptBodies(
        1,
        this.keys.attempts(destinationId),
        start,
        ERASE_SLICE,
        sourceIds.length,
        ...sourceIds,
        ...userIds,
      )) as [number, number];
      erased += Number(answer[0]);
      if (Number(answer[1]) < ERASE_SLICE) return erased;
    }
  }

  record(attempt: DeliveryAttempt): void {
    this.log.append(this.keys.attempts(attempt.destinationId), attempt);
  }

  flush(): Promise<void> {
    return this.log.flush();
  }

  close(): Promise<void> {
    return this.log.close();
  }

  /** Newest first. */
  async recent(destinationId: string, limit: number): Promise<DeliveryAttempt[]> {
    const entries = await this.redis.lrange(this.keys.attempts(destinationId), 0, limit - 1);
    return entries.map((e) => JSON.parse(e) as DeliveryAttempt);
  }

  /**
   * One page, newest first, optionally only the attempts the filter keeps. A filtered read looks
   * at most 5,000 entries (readCapped): the page may then be short, with a cursor to go on.
   */
  page(
    destinationId: string,
    options: { limit: number; cursor?: string | undefined; filter?: AttemptFilter | undefined },
  ): Promise<CappedPage<DeliveryAttempt>> {
    const filter = options.filter;
    const match = filter !== undefined && isFiltering(filter) ? (a: DeliveryAttempt) => attemptMatches(a, filter) : undefined;
    return readCapped(this.redis, this.keys.attempts(destinationId), { limit: options.limit, cursor: options.cursor, match });
  }
}

/** Attempt-log entries one erase script reads (a few milliseconds of Redis time). */
const ERASE_SLICE = 500;

// KEYS: the attempt log. ARGV: the first index, how many, the number of source ids, the source
// ids, then the user ids. Returns {erased, entries read}.
const ERASE_ATTEMPT_BODIES = `
local sources, users = {}, {}
local start, count, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
for i = 4, n + 3 do sources[ARGV[i]] = true end
for i = n + 4, #ARGV do users[ARGV[i]] = true end
local erased = 0
local entries = redis.call('LRANGE', KEYS[1], start, start + count - 1)
for i, raw in ipairs(entries) do
  local ok, e = pcall(cjson.decode, raw)
  if ok and type(e) == 'table' and type(e.userId) == 'string' and users[e.userId] and sources[e.sourceId] then
    e.userId = nil
    if type(e.request) == 'table' then e.request.body = ''; e.request.bodyTruncated = nil end
    if type(e.response) == 'table' then e.response.body = ''; e.response.bodyTruncated = nil end
    e.erased = true
    redis.call('LSET', KEYS[1], start + i - 1, cjson.encode(e))
    erased = erased + 1
  end
end
return {erased, #entries}
`;

interface EraseAttemptBodies {
  eraseAttemptBodies(numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

// Adds a dead letter and trims the oldest beyond the cap, in one step so the index, the data and
// the messageId index never disagree. KEYS: index, data, by-message, evicting marker. ARGV: jobId,
// score, json, max, messageId, episode seconds. Returns {evicted, 1 when this eviction began an
// episode}: an episode lasts while evictions keep coming less than `episode seconds` apart.
const ADD_DEAD_LETTER = `
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[5], ARGV[1])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if over <= 0 then return {0, 0} end
local began = 0
if redis.call('SET', KEYS[4], '1', 'NX', 'EX', ARGV[6]) then began = 1 else redis.call('EXPIRE', KEYS[4], ARGV[6]) end
local evicted = redis.call('ZPOPMIN', KEYS[1], over)
for i = 1, #evicted, 2 do
  local id = evicted[i]
  local ok, letter = pcall(cjson.decode, redis.call('HGET', KEYS[2], id) or '')
  local messageId = ok and type(letter) == 'table' and letter.job and letter.job.call and letter.job.call.messageId
  if messageId and redis.call('HGET', KEYS[3], messageId) == id then redis.call('HDEL', KEYS[3], messageId) end
  redis.call('HDEL', KEYS[2], id)
end
return {over, began}
`;

// Removes letters that are still the ones read (same job id and deadAt), so a message that died
// again in the meantime keeps its new letter. KEYS: index, data, by-message. ARGV: triples of
// jobId, score, messageId. Returns how many were removed.
const REMOVE_DEAD_LETTERS = `
local removed = 0
for i = 1, #ARGV, 3 do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) == tonumber(ARGV[i + 1]) then
    redis.call('ZREM', KEYS[1], ARGV[i])
    redis.call('HDEL', KEYS[2], ARGV[i])
    if redis.call('HGET', KEYS[3], ARGV[i + 2]) == ARGV[i] then redis.call('HDEL', KEYS[3], ARGV[i + 2]) end
    removed = removed + 1
  end
end
return removed
`;

// One page, newest first, after the cursor letter (job id and score). When that letter is gone
// (replayed or evicted), the page starts below its score. KEYS: index, data. ARGV: cursor job id
// ('' = newest), cursor score, count. Returns {ids and scores..., letters...} as two lists.
const PAGE_DEAD_LETTERS = `
local start = 0
if ARGV[1] ~= '' then
  local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
  if score and tonumber(score) == tonumber(ARGV[2]) then
    start = redis.call('ZREVRANK', KEYS[1], ARGV[1]) + 1
  else
    start = redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[2], '+inf')
  end
end
local page = redis.call('ZREVRANGE', KEYS[1], start, start + tonumber(ARGV[3]), 'WITHSCORES')
local letters = {}
for i = 1, #page, 2 do letters[#letters + 1] = redis.call('HGET', KEYS[2], page[i]) or '' end
return {page, letters}
`;

/** Letters a filtered page looks at, at most (GET /admin/v1/destinations/:id/dead-letters?q=). */
const DEAD_LETTER_SCAN = 5000;

/** ADD_DEAD_LETTER as defined on a connection (R: a promise of its answer) or queued on a MULTI (R: the MULTI). */
interface AddDeadLetter<R> {
  addDeadLetter(numKeys: number, ...args: (string | number)[]): R;
}

/** What adding one dead letter did to the destination's older letters. */
export interface DeadLetterEviction {
  /** Older letters evicted to stay under the cap. */
  readonly evicted: number;
  /** True when this eviction began an episode: none had been evicted for `episodeS` before it. */
  readonly episodeBegan: boolean;
}

/** Reads one ADD_DEAD_LETTER answer (from `add`, or from the MULTI a `queueAdd` went on). */
function deadLetterEviction(answer: unknown): DeadLetterEviction {
  const [evicted, began] = Array.isArray(answer) ? (answer as unknown[]) : [0, 0];
  return { evicted: Number(evicted), episodeBegan: Number(began) === 1 };
}

/**
 * Dead letters by destination: an index sorted by when the call died, the letters by letter id
 * (one per call and destination, see callDeliveryId), and the letter id by messageId. Writing one
 * is idempotent (keyed by letter id), so a worker that dies after writing and before finishing the
 * job writes the same letter again when the job is picked up.
 */
export class DeadLetterStore {
  private readonly keys: ReturnType<typeof deliveryKeys>;

  constructor(
    private readonly redis: RedisClient,
    prefix: string | Keyspace,
    private readonly maxPerDestination: number,
    /** Evictions less than this far apart belong to one episode (one audit entry, see DeadLetterEviction). */
    private readonly episodeS = 3600,
  ) {
    this.keys = deliveryKeys(prefix);
    defineScript(redis, 'addDeadLetter', ADD_DEAD_LETTER);
  }

  private keysOf(destinationId: string): [string, string, string] {
    return [this.keys.deadIndex(destinationId), this.keys.deadData(destinationId), this.keys.deadByMessage(destinationId)];
  }

  /** Adds the letter, evicting the oldest beyond the cap. */
  async add(letter: DeadLetter): Promise<DeadLetterEviction> {
    return deadLetterEviction(await (this.redis as unknown as AddDeadLetter<Promise<unknown>>).addDeadLetter(4, ...this.addArgs(letter)));
  }

  /**
   * Queues the write of `letter` on `tx` (a MULTI made from this store's connection), so it lands
   * with the job's other changes; read its answer with `evictionOf`.
   */
  queueAdd(tx: ChainableCommander, letter: DeadLetter): void {
    (tx as unknown as AddDeadLetter<ChainableCommander>).addDeadLetter(4, ...this.addArgs(letter));
  }

  /** What a write queued with `queueAdd` did, from its answer in the MULTI's results. */
  evictionOf(answer: unknown): DeadLetterEviction {
    return deadLetterEviction(answer);
  }

  private addArgs(letter: DeadLetter): (string | number)[] {
    const destinationId = letter.job.destinationId;
    return [
      ...this.keysOf(destinationId),
      this.keys.deadEvicting(destinationId),
      letter.jobId,
      Date.parse(letter.deadAt),
      JSON.stringify(letter),
      this.maxPerDestination,
      letter.job.call.messageId,
      this.episodeS,
    ];
  }

  /** Newest first. */
  async list(destinationId: string, limit: number): Promise<DeadLetter[]> {
    return (await this.page(destinationId, { limit })).items;
  }

  /**
   * One page, newest first; the cursor names the last letter looked at by the previous page. With
   * a filter, at most DEAD_LETTER_SCAN letters are looked at per page: the page may then be short,
   * with a cursor to go on. `until` starts the scan at that time and `since` ends it, both through
   * the index, so only `q` costs a scan.
   */
  async page(
    destinationId: string,
    options: { limit: number; cursor?: string | undefined; filter?: DeadLetterFilterOf | undefined },
  ): Promise<CappedPage<DeadLetter>> {
    const filter = options.filter;
    if (filter === undefined || !isFiltering(filter)) return this.readPage(destinationId, options.limit, options.cursor);
    const items: DeadLetter[] = [];
    // A cursor naming no letter (no job id has a ~) starts below its score: `until` read as one.
    let cursor = options.cursor ?? (filter.untilMs !== undefined ? `${filter.untilMs}_~` : undefined);
    let scanned = 0;
    for (;;) {
      const chunk = Math.min(Math.max(options.limit - items.length, 200), DEAD_LETTER_SCAN - scanned);
      const read = await this.readChunk(destinationId, chunk, cursor);
      for (const [i, { letter, cursor: at }] of read.entries.entries()) {
        if (filter.sinceMs !== undefined && Date.parse(letter?.deadAt ?? '') < filter.sinceMs) return { items, nextCursor: null };
        if (letter && deadLetterMatches(letter, filter)) items.push(letter);
        if (items.length === options.limit) return { items, nextCursor: i + 1 < read.entries.length || read.more ? at : null };
      }
      scanned += read.entries.length;
      const last = read.entries[read.entries.length - 1];
      if (!read.more || last === undefined) return { items, nextCursor: null };
      cursor = last.cursor;
      if (scanned >= DEAD_LETTER_SCAN) return { items, nextCursor: cursor };
    }
  }

  private async readPage(destinationId: string, limit: number, cursor: string | undefined): Promise<CappedPage<DeadLetter>> {
    const read = await this.readChunk(destinationId, limit, cursor);
    const items = read.entries.map((e) => e.letter).filter((l): l is DeadLetter => l !== undefined);
    const last = read.entries[read.entries.length - 1];
    return { items, nextCursor: read.more && last !== undefined ? last.cursor : null };
  }

  /** Up to `count` letters after the cursor, each with its own cursor; `more` when others follow. */
  private async readChunk(
    destinationId: string,
    count: number,
    cursor: string | undefined,
  ): Promise<{ entries: { letter: DeadLetter | undefined; cursor: string }[]; more: boolean }> {
    const [score, jobId] = cursor === undefined ? ['0', ''] : splitCursor(cursor);
    const [page, letters] = (await this.redis.eval(
      PAGE_DEAD_LETTERS,
      2,
      this.keys.deadIndex(destinationId),
      this.keys.deadData(destinationId),
      jobId,
      score,
      count,
    )) as [string[], string[]];
    // One more than `count` was read: it tells whether more follow.
    const entries = letters.slice(0, count).map((l, i) => ({
      letter: l === '' ? undefined : (JSON.parse(l) as DeadLetter),
      cursor: `${page[2 * i + 1]}_${page[2 * i]}`,
    }));
    return { entries, more: letters.length > count };
  }

  /** Oldest first, those that died between `sinceMs` and `untilMs` (inclusive), skipping the first `offset`. */
  async oldest(
    destinationId: string,
    options: { limit: number; sinceMs?: number | undefined; untilMs?: number | undefined; offset?: number | undefined },
  ): Promise<DeadLetter[]> {
    const ids = await this.redis.zrangebyscore(
      this.keys.deadIndex(destinationId),
      options.sinceMs ?? '-inf',
      options.untilMs ?? '+inf',
      'LIMIT',
      options.offset ?? 0,
      options.limit,
    );
    return this.read(destinationId, ids);
  }

  /** The letters of the given messageIds that have one. */
  async byMessageIds(destinationId: string, messageIds: readonly string[]): Promise<DeadLetter[]> {
    if (messageIds.length === 0) return [];
    const ids = await this.redis.hmget(this.keys.deadByMessage(destinationId), ...messageIds);
    return this.read(
      destinationId,
      ids.filter((id): id is string => id !== null),
    );
  }

  /** Removes the letters, unless one was written again since it was read. Returns how many went. */
  async remove(destinationId: string, letters: readonly DeadLetter[]): Promise<number> {
    if (letters.length === 0) return 0;
    const args = letters.flatMap((l) => [l.jobId, String(Date.parse(l.deadAt)), l.job.call.messageId]);
    return Number(await this.redis.eval(REMOVE_DEAD_LETTERS, 3, ...this.keysOf(destinationId), ...args));
  }

  private async read(destinationId: string, ids: readonly string[]): Promise<DeadLetter[]> {
    if (ids.length === 0) return [];
    const values = await this.redis.hmget(this.keys.deadData(destinationId), ...ids);
    return values.filter((v): v is string => v !== null).map((v) => JSON.parse(v) as DeadLetter);
  }
}

/** A dead-letter cursor is `<score>_<jobId>`; `isDeadLetterCursor` tells a well-formed one. */
function splitCursor(cursor: string): [string, string] {
  const at = cursor.indexOf('_');
  return [cursor.slice(0, at), cursor.slice(at + 1)];
}

export function isDeadLetterCursor(cursor: string): boolean {
  return /^\d{1,16}_[A-Za-z0-9_-]{1,200}$/.test(cursor);
}

// Changes one destination's count of calls held for a retry, and notes a cap episode. KEYS: the
// count hash, the capping marker. ARGV: destinationId, delta, calls dead-lettered by the cap,
// episode seconds. A field that reaches 0 (or less: a count reset by hand) is removed, so the hash
// holds only destinations with calls held. Returns {count after, 1 when the cap began an episode}.
const CHANGE_RETRY_HELD = `
local held
if tonumber(ARGV[2]) ~= 0 then
  held = redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
  if held <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
else
  held = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
end
local began = 0
if tonumber(ARGV[3]) > 0 then
  if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[4]) then began = 1 else redis.call('EXPIRE', KEYS[2], ARGV[4]) end
end
return {held, began}
`;

/** CHANGE_RETRY_HELD queued on a MULTI. */
interface ChangeRetryHeld {
  changeRetryHeld(numKeys: number, ...args: (string | number)[]): ChainableCommander;
}

/** What a change queued with `RetryBacklog.queueChange` did. */
export interface RetryBacklogChange {
  /** The destination's count after the change; below 0 only when it had been lowered by hand (the field is then removed). */
  readonly held: number;
  /** True when calls were dead-lettered at the cap and none had been for `episodeS` before. */
  readonly episodeBegan: boolean;
}

/**
 * How many calls each destination has held in deliver jobs for a retry (docs/delivery.md, "The
 * retry backlog cap"): one hash, field = destinationId. A job's data says how many of its calls
 * are counted (`counted`), and every commit changes that and the hash by the same difference in
 * one MULTI, so the hash is exactly the sum over the deliver jobs as long as no job holding
 * counted calls is removed behind webhook-delivery's back.
 */
export class RetryBacklog {
  private readonly keys: ReturnType<typeof deliveryKeys>;

  constructor(
    private readonly redis: RedisClient,
    prefix: string | Keyspace,
    /** Cap hits less than this far apart belong to one episode (one audit entry). */
    private readonly episodeS = 3600,
  ) {
    this.keys = deliveryKeys(prefix);
    defineScript(redis, 'changeRetryHeld', CHANGE_RETRY_HELD);
  }

  /**
   * Queues on `tx` (a MULTI made from this store's connection) a change of the destination's count
   * by `delta`, and `capped` calls dead-lettered at the cap; read its answer with `changeOf`.
   */
  queueChange(tx: ChainableCommander, destinationId: string, delta: number, capped = 0): void {
    (tx as unknown as ChangeRetryHeld).changeRetryHeld(
      2,
      this.keys.retryHeld(destinationId),
      this.keys.retryCapping(destinationId),
      destinationId,
      delta,
      capped,
      this.episodeS,
    );
  }

  /** What a change queued with `queueChange` did, from its answer in the MULTI's results. */
  changeOf(answer: unknown): RetryBacklogChange {
    const [held, began] = Array.isArray(answer) ? (answer as unknown[]) : [0, 0];
    return { held: Number(held), episodeBegan: Number(began) === 1 };
  }

  /** The destination's count now (one HGET). */
  async held(destinationId: string): Promise<number> {
    return Number((await this.redis.hget(this.keys.retryHeld(destinationId), destinationId)) ?? 0);
  }

  /** Every destination with calls held, and how many (one HGETALL per shard). */
  async all(): Promise<Map<string, number>> {
    const shards = await Promise.all(this.keys.retryHeldAll.map((key) => this.redis.hgetall(key)));
    return new Map(shards.flatMap((fields) => Object.entries(fields).map(([destinationId, n]) => [destinationId, Number(n)] as const)));
  }
}
