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
    /**
     * Per shard, destinationId → bytes of its dead letters' JSON (see DeadLetterStore); no field
     * when it has none, or before its first letter written since the byte cap existed.
     */
    deadBytes: (destinationId: string) => `${at(destinationId)}:dead-bytes`,
    /** Every shard's deadBytes hash. */
    deadBytesAll: keys.prefixes.map((prefix) => `${prefix}:dead-bytes`),
    /** Per shard, destinationId → calls held in deliver jobs for a retry (see RetryBacklog); no field at 0. */
    retryHeld: (destinationId: string) => `${at(destinationId)}:retry-held`,
    /** Every shard's retryHeld hash. */
    retryHeldAll: keys.prefixes.map((prefix) => `${prefix}:retry-held`),
    /** Per shard, destinationId → bytes of the calls its deliver jobs hold for a retry; no field at 0. */
    retryHeldBytes: (destinationId: string) => `${at(destinationId)}:retry-held-bytes`,
    /** Every shard's retryHeldBytes hash. */
    retryHeldBytesAll: keys.prefixes.map((prefix) => `${prefix}:retry-held-bytes`),
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

// The bytes of a destination's letters (their JSON, as the data hash holds it) are a running total
// in the dead-bytes hash, changed by every step that writes or removes a letter, so the byte cap
// costs O(1) per letter. A missing field means "not known": letters written before the total
// existed. The add step then sums the data hash once (HSTRLEN of each letter, bounded by the count
// cap); the remove steps leave it missing, so the sum is always of the letters as they are then.
const DEAD_BYTES_KNOWN = `
local function deadBytes(letters, data, bytes, destinationId)
  local total = redis.call('HGET', bytes, destinationId)
  if total and letters > 0 then return tonumber(total) end
  -- Unknown, or no letter left (a total outliving its letters, as a deleted destination's can
  -- when its records go in a later command than the field): summed from what is there.
  total = 0
  for _, id in ipairs(redis.call('HKEYS', data)) do total = total + redis.call('HSTRLEN', data, id) end
  return total
end
`;

// Lowers a known total by what went (a field that reaches 0 is removed: no letters, nothing to sum
// at the next add); a missing one stays missing.
export const DEAD_BYTES_LOWER = `
local function lowerDeadBytes(bytes, destinationId, by)
  if by == 0 or not redis.call('HGET', bytes, destinationId) then return end
  if redis.call('HINCRBY', bytes, destinationId, -by) <= 0 then redis.call('HDEL', bytes, destinationId) end
end
`;

// Adds a dead letter and evicts the oldest beyond either cap (count, bytes), in one step so the
// index, the data, the messageId index and the byte total never disagree. The count cap evicts as
// many as it is over; the byte cap then evicts the oldest one at a time until the total fits, never
// the last letter left, and at most ARGV[9] of them: at the cap an add evicts a few (a letter is at
// most about 33 KB), but a cap just lowered (or the first add after an upgrade from count-only
// caps) would otherwise evict tens of thousands in one script and hold Redis for seconds; bounded,
// the letters over the cap go with the next adds instead. KEYS: index, data, by-message, evicting
// marker, bytes. ARGV: jobId, score, json, max, messageId, episode seconds, max bytes (0: none),
// destinationId, most byte evictions. Returns {evicted, 1 when this eviction began an episode,
// bytes held after, 1 when the byte cap evicted}: an episode lasts while evictions keep coming
// less than `episode seconds` apart.
const ADD_DEAD_LETTER = `${DEAD_BYTES_KNOWN}
-- The letters in the index, read once and kept up to date below (ZADD says whether the letter is
-- new, each eviction how many went).
local letters = redis.call('ZCARD', KEYS[1])
local total = deadBytes(letters, KEYS[2], KEYS[5], ARGV[8])
-- Written again (the same call, idempotent): the old letter's bytes go, the new one's come.
total = total - redis.call('HSTRLEN', KEYS[2], ARGV[1]) + string.len(ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
letters = letters + redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[5], ARGV[1])
local function evict(n)
  local evicted = redis.call('ZPOPMIN', KEYS[1], n)
  for i = 1, #evicted, 2 do
    local id = evicted[i]
    local raw = redis.call('HGET', KEYS[2], id) or ''
    total = total - string.len(raw)
    local ok, letter = pcall(cjson.decode, raw)
    local messageId = ok and type(letter) == 'table' and letter.job and letter.job.call and letter.job.call.messageId
    if messageId and redis.call('HGET', KEYS[3], messageId) == id then redis.call('HDEL', KEYS[3], messageId) end
    redis.call('HDEL', KEYS[2], id)
  end
  letters = letters - #evicted / 2
  return #evicted / 2
end
local evicted = 0
local over = letters - tonumber(ARGV[4])
if over > 0 then evicted = evict(over) end
local maxBytes, forBytes, room = tonumber(ARGV[7]), 0, tonumber(ARGV[9])
while maxBytes > 0 and total > maxBytes and forBytes < room and letters > 1 do
  evicted = evicted + evict(1)
  forBytes = forBytes + 1
end
if forBytes > 0 then forBytes = 1 end
redis.call('HSET', KEYS[5], ARGV[8], total)
if evicted == 0 then return {0, 0, total, 0} end
local began = 0
if redis.call('SET', KEYS[4], '1', 'NX', 'EX', ARGV[6]) then began = 1 else redis.call('EXPIRE', KEYS[4], ARGV[6]) end
return {evicted, began, total, forBytes}
`;

// Removes letters that are still the ones read (same job id and deadAt), so a message that died
// again in the meantime keeps its new letter. KEYS: index, data, by-message, bytes. ARGV:
// destinationId, then triples of jobId, score, messageId. Returns how many were removed.
const REMOVE_DEAD_LETTERS = `${DEAD_BYTES_LOWER}
local removed, bytes = 0, 0
for i = 2, #ARGV, 3 do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) == tonumber(ARGV[i + 1]) then
    bytes = bytes + redis.call('HSTRLEN', KEYS[2], ARGV[i])
    redis.call('ZREM', KEYS[1], ARGV[i])
    redis.call('HDEL', KEYS[2], ARGV[i])
    if redis.call('HGET', KEYS[3], ARGV[i + 2]) == ARGV[i] then redis.call('HDEL', KEYS[3], ARGV[i + 2]) end
    removed = removed + 1
  end
end
lowerDeadBytes(KEYS[4], ARGV[1], bytes)
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

/**
 * Letters one add evicts for the byte cap, at most (a few milliseconds of Redis time). At the cap
 * an add evicts one letter, or a few for a large one; only a cap lowered past what is held needs
 * more, and then the next adds go on.
 */
const BYTE_EVICTIONS_PER_ADD = 200;

/** Letters a filtered page looks at, at most (GET /admin/v1/destinations/:id/dead-letters?q=). */
const DEAD_LETTER_SCAN = 5000;

/** ADD_DEAD_LETTER as defined on a connection (R: a promise of its answer) or queued on a MULTI (R: the MULTI). */
interface AddDeadLetter<R> {
  addDeadLetter(numKeys: number, ...args: (string | number)[]): R;
}

/** What adding one dead letter did to the destination's older letters. */
export interface DeadLetterEviction {
  /** Older letters evicted to stay under the caps (count and bytes). */
  readonly evicted: number;
  /** True when this eviction began an episode: none had been evicted for `episodeS` before it. */
  readonly episodeBegan: boolean;
  /** The bytes of the destination's letters after the add (their JSON). */
  readonly bytes: number;
  /** True when the byte cap evicted some of them (else only the count cap did, or nothing was). */
  readonly byBytes: boolean;
}

/** Reads one ADD_DEAD_LETTER answer (from `add`, or from the MULTI a `queueAdd` went on). */
function deadLetterEviction(answer: unknown): DeadLetterEviction {
  const [evicted, began, bytes, byBytes] = Array.isArray(answer) ? (answer as unknown[]) : [0, 0, 0, 0];
  return { evicted: Number(evicted), episodeBegan: Number(began) === 1, bytes: Number(bytes ?? 0), byBytes: Number(byBytes) === 1 };
}

export interface DeadLetterCaps {
  /** Letters kept per destination; the oldest are evicted beyond it. */
  readonly maxPerDestination: number;
  /** Bytes of letters (their JSON) kept per destination; the oldest are evicted beyond it. None when absent. */
  readonly maxBytesPerDestination?: number;
  /** Evictions less than this far apart belong to one episode (one audit entry, see DeadLetterEviction); 3600 by default. */
  readonly episodeS?: number;
}

/**
 * Dead letters by destination: an index sorted by when the call died, the letters by letter id
 * (one per call and destination, see callDeliveryId), and the letter id by messageId. Writing one
 * is idempotent (keyed by letter id), so a worker that dies after writing and before finishing the
 * job writes the same letter again when the job is picked up. Each destination's letters are
 * capped by count and by bytes (a running total per destination, `deadBytes`, changed in the same
 * Lua step as the letters by every write and removal: adds, evictions, replays, user purges).
 */
export class DeadLetterStore {
  private readonly keys: ReturnType<typeof deliveryKeys>;
  private readonly caps: Required<DeadLetterCaps>;

  constructor(
    private readonly redis: RedisClient,
    prefix: string | Keyspace,
    caps: DeadLetterCaps,
  ) {
    this.keys = deliveryKeys(prefix);
    this.caps = { maxBytesPerDestination: 0, episodeS: 3600, ...caps };
    defineScript(redis, 'addDeadLetter', ADD_DEAD_LETTER);
  }

  private keysOf(destinationId: string): [string, string, string] {
    return [this.keys.deadIndex(destinationId), this.keys.deadData(destinationId), this.keys.deadByMessage(destinationId)];
  }

  /** Adds the letter, evicting the oldest beyond the caps. */
  async add(letter: DeadLetter): Promise<DeadLetterEviction> {
    return deadLetterEviction(await (this.redis as unknown as AddDeadLetter<Promise<unknown>>).addDeadLetter(5, ...this.addArgs(letter)));
  }

  /**
   * Queues the write of `letter` on `tx` (a MULTI made from this store's connection), so it lands
   * with the job's other changes; read its answer with `evictionOf`.
   */
  queueAdd(tx: ChainableCommander, letter: DeadLetter): void {
    (tx as unknown as AddDeadLetter<ChainableCommander>).addDeadLetter(5, ...this.addArgs(letter));
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
      this.keys.deadBytes(destinationId),
      letter.jobId,
      Date.parse(letter.deadAt),
      JSON.stringify(letter),
      this.caps.maxPerDestination,
      letter.job.call.messageId,
      this.caps.episodeS,
      this.caps.maxBytesPerDestination,
      destinationId,
      BYTE_EVICTIONS_PER_ADD,
    ];
  }

  /** The bytes of each destination's letters that has any (one HGETALL per shard). */
  async allBytes(): Promise<Map<string, number>> {
    return readAll(this.redis, this.keys.deadBytesAll);
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
    return Number(
      await this.redis.eval(
        REMOVE_DEAD_LETTERS,
        4,
        ...this.keysOf(destinationId),
        this.keys.deadBytes(destinationId),
        destinationId,
        ...args,
      ),
    );
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

// Changes one destination's count of calls held for a retry and their bytes, and notes a cap
// episode. KEYS: the count hash, the bytes hash, the capping marker. ARGV: destinationId, delta,
// bytes delta, calls dead-lettered by a cap, episode seconds. A field that reaches 0 (or less: a
// count reset by hand) is removed, so the hashes hold only destinations with calls held. Returns
// {count after, 1 when a cap began an episode, bytes after}.
const CHANGE_RETRY_HELD = `
local function change(key, delta)
  if tonumber(delta) == 0 then return tonumber(redis.call('HGET', key, ARGV[1]) or '0') end
  local after = redis.call('HINCRBY', key, ARGV[1], delta)
  if after <= 0 then redis.call('HDEL', key, ARGV[1]) end
  return after
end
local held = change(KEYS[1], ARGV[2])
local bytes = change(KEYS[2], ARGV[3])
local began = 0
if tonumber(ARGV[4]) > 0 then
  if redis.call('SET', KEYS[3], '1', 'NX', 'EX', ARGV[5]) then began = 1 else redis.call('EXPIRE', KEYS[3], ARGV[5]) end
end
return {held, began, bytes}
`;

/** CHANGE_RETRY_HELD queued on a MULTI. */
interface ChangeRetryHeld {
  changeRetryHeld(numKeys: number, ...args: (string | number)[]): ChainableCommander;
}

/** What a change queued with `RetryBacklog.queueChange` did. */
export interface RetryBacklogChange {
  /** The destination's count after the change; below 0 only when it had been lowered by hand (the field is then removed). */
  readonly held: number;
  /** The bytes of its calls held after the change; below 0 likewise only after a change by hand. */
  readonly bytes: number;
  /** True when calls were dead-lettered at a cap and none had been for `episodeS` before. */
  readonly episodeBegan: boolean;
}

/** What a destination holds for a retry: calls, and their bytes (each call's JSON as its job holds it). */
export interface RetryHolding {
  readonly calls: number;
  readonly bytes: number;
}

/**
 * How many calls each destination has held in deliver jobs for a retry, and their bytes
 * (docs/delivery.md, "The retry backlog cap"): two hashes, field = destinationId. A job's data says
 * how many of its calls are counted (`counted`) and their bytes (`countedBytes`), and every commit
 * changes those and the hashes by the same differences in one MULTI, so each hash is exactly the
 * sum over the deliver jobs as long as no job holding counted calls is removed behind
 * webhook-delivery's back.
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
   * by `delta` and of its bytes by `bytesDelta`, and `capped` calls dead-lettered at a cap; read
   * its answer with `changeOf`.
   */
  queueChange(tx: ChainableCommander, destinationId: string, delta: number, bytesDelta: number, capped = 0): void {
    (tx as unknown as ChangeRetryHeld).changeRetryHeld(
      3,
      this.keys.retryHeld(destinationId),
      this.keys.retryHeldBytes(destinationId),
      this.keys.retryCapping(destinationId),
      destinationId,
      delta,
      bytesDelta,
      capped,
      this.episodeS,
    );
  }

  /** What a change queued with `queueChange` did, from its answer in the MULTI's results. */
  changeOf(answer: unknown): RetryBacklogChange {
    const [held, began, bytes] = Array.isArray(answer) ? (answer as unknown[]) : [0, 0, 0];
    return { held: Number(held), bytes: Number(bytes ?? 0), episodeBegan: Number(began) === 1 };
  }

  /**
   * The destination's count and bytes now: two HGETs sent together. No MULTI: the caps' check is
   * approximate anyway (a commit of another job may land between this read and the commit it is
   * for), and on a connection BullMQ shares, ioredis builds each MULTI or pipeline by copying every
   * script defined on it, which costs more than the second command.
   */
  async held(destinationId: string): Promise<RetryHolding> {
    const [calls, bytes] = await Promise.all([
      this.redis.hget(this.keys.retryHeld(destinationId), destinationId),
      this.redis.hget(this.keys.retryHeldBytes(destinationId), destinationId),
    ]);
    return { calls: Number(calls ?? 0), bytes: Number(bytes ?? 0) };
  }

  /** Every destination with calls held, and how many (one HGETALL per shard). */
  all(): Promise<Map<string, number>> {
    return readAll(this.redis, this.keys.retryHeldAll);
  }

  /** Every destination with calls held, and their bytes (one HGETALL per shard). */
  allBytes(): Promise<Map<string, number>> {
    return readAll(this.redis, this.keys.retryHeldBytesAll);
  }
}

/** Field → number over one hash per shard (destination ids are on one shard each). */
async function readAll(redis: RedisClient, keys: readonly string[]): Promise<Map<string, number>> {
  const shards = await Promise.all(keys.map((key) => redis.hgetall(key)));
  return new Map(shards.flatMap((fields) => Object.entries(fields).map(([destinationId, n]) => [destinationId, Number(n)] as const)));
}
