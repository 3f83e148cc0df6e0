/**
 * Call batches: the calls ingest accepts within one flush, written to Redis once and read by
 * reference afterwards (docs/delivery.md, "The job model"). A batch is a hash,
 * `<prefix>:batch:<batchId>`:
 *   "c<start>"           the calls one source sent in the flush, as one JSON array (the text is
 *                        written as ingest serialized it, with a plain HSET: RedisClient parses nothing);
 *                        calls are numbered across the flush source by source, so a source's
 *                        calls are <start>, <start> + 1, …
 *   "r"                  the route entries of the stored requests (what the router needs of each
 *                        call), until routed
 *   "x"                  the calls of stored requests that are not to be routed (duplicates)
 *   "h"                  how many destinations still need the calls, once routed
 *   "d:<destinationId>"  present while that destination's first round has not finished
 *   "p"                  the routing plan, when the batch was routed in two steps (below)
 * The route job (same id) is added in the MULTI that writes the batch. The router reads only "r"
 * and "x", and in one step deletes them and names the destinations that hold the batch; each
 * destination's delivery job reads the sources' fields holding its calls, and after its first round
 * (calls to retry move into the job itself) releases its hold; the last release deletes the
 * batch. Deleting "r" is what makes routing a batch twice harmless, and the per-destination field
 * what makes a release count once.
 * When the delivery jobs go to other shards than the batch (EVENTRELAY_SHARDS > 1), no MULTI can
 * hold the mark and the job adds together, so routing takes two steps: HOLD marks the batch routed
 * as PLAN does and also keeps the plan in "p" (in a MULTI with the profile jobs, which live on the
 * batch's shard), then the jobs are added on their shards. "p" stays until the batch is deleted: a
 * route job run again (the router died between the steps) finds no route entries but the kept
 * plan, and adds the same jobs again: one still queued is not added twice (same job id), one whose
 * first round ran finds its hold gone and does nothing.
 */
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '@eventrelay/runtime';
import { routeEntryOf, type BatchRef, type NormalizedCall, type RouteEntry } from '@eventrelay/config';
import { defineScript } from '@eventrelay/runtime';
import { bucketFreedAtS, CLAIM_OVERHEAD_BYTES, claimBuckets } from './claim-budget.js';

// Runs right after the HSET of the flush's calls (one field per source, written as plain bytes:
// passing them through Lua would cost Redis a second copy of every call). KEYS: batch, then one
// pace key per source, then one budget key per source, then (when the dedupe TTL is not 0) one
// dedupe key per call, in call order. ARGV: dedupe TTL (s), number of sources, the batch's
// backstop TTL (BATCH_TTL_S), the claim buckets (claim-budget.ts: the current one, the first that
// may be alive, the budget hash's TTL), the bytes a claim costs beyond its key, the time (epoch ms)
// and how far ahead of its pace a source may run (ms); then per source its limit (calls/s, 0 =
// none), its budget (bytes, 0 = none) and its number of requests, and per request its number of
// calls and its route entries (JSON objects joined by commas).
// The limit paces calls, not requests (docs/intake.md, "Rate limit"): each call a source stores
// moves its pace key (the time its calls so far are paid for) on by 1/limit s, and a request is
// refused while it would take that time more than the allowance ahead of now, except when the
// source is not ahead at all (so a batch larger than the whole allowance still gets through, and
// then waits its time out); a refused request moves nothing.
// The budget counts the bytes of the source's live claims (a hash: "t" the total, "o" the oldest
// bucket counted, "b<n>" each bucket's bytes): buckets past their claims' expiry are freed first; a
// request whose new claims would take the total past the budget is refused whole (repeats are
// looked up only near the edge), and a stored one adds the bytes of the claims it made.
// A refused request gets no route entries (its calls go with the batch); a call whose messageId is
// already claimed is a duplicate, listed in "x". With nothing to route the batch is deleted at once.
// Returns per request, in order, {-1, when it would fit (epoch ms)} (over the limit), {-2, the
// oldest bucket holding bytes} (over the budget) or one 0 (to route) / 1 (duplicate) per call. The
// claims (SET NX) and the route entries are one step, so a call is claimed exactly when it is stored
// for routing: concurrent flushes, on this process or another, can never both route it.
const INTAKE = `
local ttl = tonumber(ARGV[1])
local groups = tonumber(ARGV[2])
local bucket = ARGV[4]
local liveFrom = tonumber(ARGV[5])
local overhead = tonumber(ARGV[7])
local now = tonumber(ARGV[8])
local allowance = tonumber(ARGV[9])
local dedupeKey = 1 + 2 * groups
local arg = 10
local index = 0
local out = {}
local entries = {}
local excluded = {}
for g = 1, groups do
  local limit = tonumber(ARGV[arg])
  local budget = tonumber(ARGV[arg + 1])
  local requests = tonumber(ARGV[arg + 2])
  arg = arg + 3
  local paid = math.max(now, tonumber(redis.call('GET', KEYS[1 + g]) or '0'))
  local paced = false
  local budgetKey = KEYS[1 + groups + g]
  local held = 0
  if budget > 0 and ttl > 0 then
    local oldest = tonumber(redis.call('HGET', budgetKey, 'o') or liveFrom)
    if oldest < liveFrom then
      local freed = 0
      for b = oldest, liveFrom - 1 do
        freed = freed + tonumber(redis.call('HGET', budgetKey, 'b' .. b) or '0')
        redis.call('HDEL', budgetKey, 'b' .. b)
      end
      redis.call('HSET', budgetKey, 'o', liveFrom)
      if freed > 0 then redis.call('HINCRBY', budgetKey, 't', -freed) end
    end
    held = tonumber(redis.call('HGET', budgetKey, 't') or '0')
  end
  local added = 0
  for r = 1, requests do
    local count = tonumber(ARGV[arg])
    local cost = 0
    if budget > 0 and ttl > 0 then
      for j = 1, count do cost = cost + overhead + #KEYS[dedupeKey + j] end
    end
    local over = false
    if cost > 0 and held + cost > budget then
      -- Near the edge, the exact cost: a repeat (a client's retry) makes no claim.
      cost = 0
      for j = 1, count do
        local key = KEYS[dedupeKey + j]
        if redis.call('EXISTS', key) == 0 then cost = cost + overhead + #key end
      end
      over = held + cost > budget
    end
    local due = paid
    if limit > 0 then due = paid + count * 1000 / limit end
    if due > paid and paid > now and due - now > allowance then
      out[#out + 1] = {-1, math.ceil(due - allowance)}
      if ttl > 0 then dedupeKey = dedupeKey + count end
    elseif over then
      -- The oldest bucket holding bytes: when it is freed, the source has room again.
      local first = tonumber(bucket)
      for b = math.max(liveFrom, tonumber(redis.call('HGET', budgetKey, 'o') or liveFrom)), first do
        if redis.call('HEXISTS', budgetKey, 'b' .. b) == 1 then
          first = b
          break
        end
      end
      out[#out + 1] = {-2, first}
      dedupeKey = dedupeKey + count
    else
      local verdicts = {}
      local dups = {}
      for j = 1, count do
        local fresh = true
        if ttl > 0 then
          dedupeKey = dedupeKey + 1
          fresh = redis.call('SET', KEYS[dedupeKey], '1', 'NX', 'EX', ttl) ~= false
          if fresh and budget > 0 then added = added + overhead + #KEYS[dedupeKey] end
        end
        if fresh then verdicts[j] = 0 else
          verdicts[j] = 1
          dups[#dups + 1] = tostring(index + j - 1)
        end
      end
      if #dups < count then
        entries[#entries + 1] = ARGV[arg + 1]
        for k = 1, #dups do excluded[#excluded + 1] = dups[k] end
      end
      out[#out + 1] = verdicts
      paid = due
      paced = true
      held = held + cost
    end
    index = index + count
    arg = arg + 2
  end
  -- %.3f: Lua's own number to string keeps 14 digits, too few for epoch ms with a fraction.
  if paced and limit > 0 then redis.call('SET', KEYS[1 + g], string.format('%.3f', paid), 'PX', math.ceil(paid - now) + 1) end
  if added > 0 then
    redis.call('HINCRBY', budgetKey, 'b' .. bucket, added)
    redis.call('HINCRBY', budgetKey, 't', added)
    redis.call('HSETNX', budgetKey, 'o', liveFrom)
    redis.call('EXPIRE', budgetKey, ARGV[6])
  end
end
if #entries == 0 then
  redis.call('DEL', KEYS[1])
  return out
elseif #excluded > 0 then
  redis.call('HSET', KEYS[1], 'r', '[' .. table.concat(entries, ',') .. ']', 'x', table.concat(excluded, ','))
else
  redis.call('HSET', KEYS[1], 'r', '[' .. table.concat(entries, ',') .. ']')
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return out
`;

// KEYS: batch. ARGV: the destinations that get calls of it. Deletes the route entries and names
// the holders, once: a second run (the route job retried) finds no entries and changes nothing.
// With no destination the calls are needed by nobody and the batch goes at once. Returns 1 when
// this run planned the batch, 0 when it had been planned (or never stored) before.
const PLAN = `
if redis.call('HDEL', KEYS[1], 'r') == 0 then return 0 end
if #ARGV == 0 then
  redis.call('DEL', KEYS[1])
  return 1
end
local args = {'h', #ARGV}
for i = 1, #ARGV do
  args[#args + 1] = 'd:' .. ARGV[i]
  args[#args + 1] = '1'
end
redis.call('HDEL', KEYS[1], 'x')
redis.call('HSET', KEYS[1], unpack(args))
return 1
`;

// KEYS: batch. ARGV: the plan (JSON), then the destinations that get calls of it. Like PLAN, and
// keeps the plan; returns the plan kept (this one, or an earlier run's), or false when the batch was
// routed without one (or never stored).
const HOLD = `
local kept = redis.call('HGET', KEYS[1], 'p')
if kept then return kept end
if redis.call('HDEL', KEYS[1], 'r') == 0 then return false end
local args = {'p', ARGV[1], 'h', #ARGV - 1}
for i = 2, #ARGV do
  args[#args + 1] = 'd:' .. ARGV[i]
  args[#args + 1] = '1'
end
redis.call('HDEL', KEYS[1], 'x')
redis.call('HSET', KEYS[1], unpack(args))
return ARGV[1]
`;

// KEYS: batch. ARGV: destination. Ends that destination's hold, once; the last hold deletes the
// batch. Returns 1 when this call released the hold, 0 when it was released before.
const RELEASE = `
if redis.call('HDEL', KEYS[1], 'd:' .. ARGV[1]) == 0 then return 0 end
if redis.call('HINCRBY', KEYS[1], 'h', -1) <= 0 then redis.call('DEL', KEYS[1]) end
return 1
`;

/** The scripts, queued on a MULTI: each returns the MULTI. */
interface QueuedBatchCommands {
  intakeBatch(numKeys: number, ...args: (string | number)[]): ChainableCommander;
  planBatch(numKeys: number, ...args: string[]): ChainableCommander;
  holdBatch(numKeys: number, ...args: string[]): ChainableCommander;
  releaseBatch(numKeys: number, ...args: string[]): ChainableCommander;
}

/** One request of a flush. `callsJson`: JSON.stringify(calls), made when the request came in. */
export interface FlushRequest {
  readonly sourceId: string;
  /** Calls per second, taken at an even pace (RATE_ALLOWANCE_MS); 0: not limited. */
  readonly ratePerSecond: number;
  /** Bytes the source's claims may hold (claim-budget.ts); 0 or absent: no budget. Read from its first request in the flush. */
  readonly budgetBytes?: number;
  readonly calls: readonly NormalizedCall[];
  readonly callsJson: string;
}

/** Per request of a flush: over its limit or its budget, or for each call whether it was a duplicate. */
export type IntakeVerdict =
  /** `retryAtMs`: when (epoch ms) the same request would fit in its source's pace. */
  | { readonly kind: 'rate_limited'; readonly retryAtMs: number }
  /** `freesAtS`: when (epoch seconds) the oldest of the source's counted claims expire, and it has room again. */
  | { readonly kind: 'over_budget'; readonly freesAtS: number }
  | { readonly kind: 'stored'; readonly duplicate: readonly boolean[] };

/** A source's requests in one flush: its calls are numbered together, from `part`, and stored in one field. */
interface SourceGroup {
  readonly sourceId: string;
  readonly ratePerSecond: number;
  readonly budgetBytes: number;
  readonly part: number;
  /** Positions of its requests in the flush as given. */
  readonly requests: number[];
  readonly entries: RouteEntry[][];
  readonly callsJson: string[];
}

/**
 * Groups a flush's requests by source (in the order sources first appear) and numbers the calls
 * group by group, so each source's calls are one run of numbers and one field of the batch.
 */
function groupBySource(requests: readonly FlushRequest[]): SourceGroup[] {
  const groups = new Map<string, { sourceId: string; ratePerSecond: number; budgetBytes: number; requests: number[] }>();
  requests.forEach((r, i) => {
    const g = groups.get(r.sourceId);
    if (g) g.requests.push(i);
    else groups.set(r.sourceId, { sourceId: r.sourceId, ratePerSecond: r.ratePerSecond, budgetBytes: r.budgetBytes ?? 0, requests: [i] });
  });
  let index = 0;
  return [...groups.values()].map((g) => {
    const part = index;
    const entries = g.requests.map((i) => (requests[i] as FlushRequest).calls.map((call) => routeEntryOf(call, g.sourceId, index++, part)));
    return { ...g, part, entries, callsJson: g.requests.map((i) => (requests[i] as FlushRequest).callsJson) };
  });
}

/** JSON arrays (each with at least one item) as one array, without parsing them. */
function joinArrays(texts: readonly string[]): string {
  return texts.length === 1 ? (texts[0] as string) : `[${texts.map((t) => t.slice(1, -1)).join(',')}]`;
}

/**
 * A backstop, not a schedule: a batch is deleted when its last destination releases it, normally
 * within a second. Only a delivery job that failed for good (BullMQ's attempts used up) and is never
 * retried would hold one longer; BullMQ forgets such jobs after 7 days, and this bounds what they
 * leave behind. A delivery job still waiting after 30 days would find its calls gone.
 */
export const BATCH_TTL_S = 30 * 24 * 60 * 60;

/**
 * How far ahead of its pace a source may run: one second of its limit may arrive at once (a burst
 * after a quiet spell, or a large batch), and beyond that its calls are taken at its limit's even
 * pace, never a second's worth at each second's start.
 */
const RATE_ALLOWANCE_MS = 1000;

export class CallBatches {
  constructor(
    private readonly redis: RedisClient,
    /** Where the batches live: a route shard's prefix. */
    readonly prefix: string,
  ) {
    defineScript(redis, 'intakeBatch', INTAKE);
    defineScript(redis, 'planBatch', PLAN);
    defineScript(redis, 'holdBatch', HOLD);
    defineScript(redis, 'releaseBatch', RELEASE);
  }

  key(batchId: string): string {
    return `${this.prefix}:batch:${batchId}`;
  }

  /** The hash counting a source's claim budget (see INTAKE). */
  budgetKey(sourceId: string): string {
    return `${this.prefix}:budget:${sourceId}`;
  }

  /** Bytes of a source's live claims as counted for its budget (0 when it has none or no budget). */
  async claimBytes(sourceId: string): Promise<number> {
    return Number((await this.redis.hget(this.budgetKey(sourceId), 't')) ?? 0);
  }

  /**
   * Queues on `tx` (a MULTI made from this connection) the two commands that store a flush's
   * calls, then rate-limit and dedupe them (see INTAKE); returns how to read the verdicts, per
   * request in the order given, from the second one's answer. `nowMs`: the time of the rate limit's
   * pace and of the claim budget; `dedupeTtlS` 0 turns dedupe off, and with it the budgets (they
   * count claims).
   */
  queueIntake(
    tx: ChainableCommander,
    batchId: string,
    requests: readonly FlushRequest[],
    options: { nowMs: number; dedupeTtlS: number },
  ): (answer: unknown) => IntakeVerdict[] {
    const key = this.key(batchId);
    const groups = groupBySource(requests);
    // The object form: BullMQ's MULTIs (route jobs are added on them) take HSET's fields only so.
    tx.hset(key, Object.fromEntries(groups.map((g) => [`c${g.part}`, joinArrays(g.callsJson)])));
    const keys = [key, ...groups.map((g) => `${this.prefix}:pace:${g.sourceId}`), ...groups.map((g) => this.budgetKey(g.sourceId))];
    const buckets = claimBuckets(options.nowMs, Math.max(1, options.dedupeTtlS));
    const args: (string | number)[] = [
      options.dedupeTtlS,
      groups.length,
      BATCH_TTL_S,
      buckets.bucket,
      buckets.liveFrom,
      options.dedupeTtlS + buckets.bucketS,
      CLAIM_OVERHEAD_BYTES,
      options.nowMs,
      RATE_ALLOWANCE_MS,
    ];
    for (const g of groups) {
      args.push(g.ratePerSecond, g.budgetBytes, g.requests.length);
      for (const entries of g.entries) {
        args.push(entries.length, entries.map((e) => JSON.stringify(e)).join(','));
        if (options.dedupeTtlS > 0) for (const e of entries) keys.push(`${this.prefix}:dedupe:${g.sourceId}:${e.messageId}`);
      }
    }
    (tx as unknown as QueuedBatchCommands).intakeBatch(keys.length, ...keys, ...args);
    return (answer) => {
      const raw = answer as number[][];
      if (!Array.isArray(raw) || raw.length !== requests.length) throw malformedIntakeAnswer(answer);
      const verdicts: IntakeVerdict[] = new Array<IntakeVerdict>(requests.length);
      let k = 0;
      for (const g of groups) {
        for (const i of g.requests) {
          const v = raw[k++];
          if (!Array.isArray(v)) throw malformedIntakeAnswer(answer);
          if (v[0] === -1) verdicts[i] = { kind: 'rate_limited', retryAtMs: v[1] ?? options.nowMs + RATE_ALLOWANCE_MS };
          else if (v[0] === -2) verdicts[i] = { kind: 'over_budget', freesAtS: bucketFreedAtS(v[1] ?? buckets.bucket, options.dedupeTtlS) };
          else verdicts[i] = { kind: 'stored', duplicate: v.map((d) => d === 1) };
        }
      }
      return verdicts;
    };
  }

  /**
   * The route entries of the batch's calls to route (duplicates left out), or undefined when it
   * was routed before (or nothing of it was stored).
   */
  async routeEntries(batchId: string): Promise<RouteEntry[] | undefined> {
    return (await this.routeState(batchId)).entries;
  }

  /**
   * What routing the batch needs: its route entries while it is not routed; once routed in two
   * steps (HOLD), the plan kept (JSON) while the batch lives.
   */
  async routeState(batchId: string): Promise<{ entries?: RouteEntry[]; kept?: string }> {
    const [text, excluded, kept] = await this.redis.hmget(this.key(batchId), 'r', 'x', 'p');
    const entries = routable(text, excluded);
    return { ...(entries ? { entries } : {}), ...(kept ? { kept } : {}) };
  }

  /**
   * The calls of a batch not routed yet that are to be routed, by source (in flush order), as
   * stored: for tests and inspection. Empty when the batch was routed or holds nothing.
   */
  async contents(batchId: string): Promise<{ sourceId: string; calls: NormalizedCall[] }[]> {
    const fields = await this.redis.hgetall(this.key(batchId));
    const entries = routable(fields['r'], fields['x']) ?? [];
    const bySource = new Map<string, NormalizedCall[]>();
    for (const entry of [...entries].sort((a, b) => a.index - b.index)) {
      const part = fields[`c${entry.part}`];
      const call = part === undefined ? undefined : (JSON.parse(part) as NormalizedCall[])[entry.index - entry.part];
      if (call === undefined) continue;
      let list = bySource.get(entry.sourceId);
      if (!list) bySource.set(entry.sourceId, (list = []));
      list.push(call);
    }
    return [...bySource].map(([sourceId, calls]) => ({ sourceId, calls }));
  }

  /**
   * The calls stored in the batch's fields `c<part>` for each of `parts` (the router's read for
   * filters that test fields a route entry does not hold), by part; a part not found is left out.
   */
  async readParts(batchId: string, parts: readonly number[]): Promise<Map<number, NormalizedCall[]>> {
    const texts = parts.length === 0 ? [] : await this.redis.hmget(this.key(batchId), ...parts.map((p) => `c${p}`));
    const calls = new Map<number, NormalizedCall[]>();
    parts.forEach((part, i) => {
      const text = texts[i];
      if (text !== null && text !== undefined) calls.set(part, JSON.parse(text) as NormalizedCall[]);
    });
    return calls;
  }

  /** Queues on `tx` the step that marks the batch routed and names the destinations holding it. */
  queuePlan(tx: ChainableCommander, batchId: string, destinationIds: readonly string[]): void {
    (tx as unknown as QueuedBatchCommands).planBatch(1, this.key(batchId), ...destinationIds);
  }

  /**
   * Queues on `tx` the first of the two routing steps (above): the batch marked routed, the holds
   * of `destinationIds` set and `plan` kept. Its answer is the plan kept (an earlier run's, when
   * there was one), or null when the batch was routed before without one.
   */
  queueHold(tx: ChainableCommander, batchId: string, plan: string, destinationIds: readonly string[]): void {
    (tx as unknown as QueuedBatchCommands).holdBatch(1, this.key(batchId), plan, ...destinationIds);
  }

  /**
   * The calls a delivery job references, in the order of its parts and indexes (undefined where a
   * call is missing), or undefined when `destinationId` no longer holds the batch: its first round
   * finished before (a job run again after a crash).
   */
  async readCalls(destinationId: string, batch: BatchRef): Promise<(NormalizedCall | undefined)[] | undefined> {
    const [hold, ...texts] = await this.redis.hmget(this.key(batch.id), `d:${destinationId}`, ...batch.parts.map((p) => `c${p.part}`));
    if (hold === null || hold === undefined) return undefined;
    const calls: (NormalizedCall | undefined)[] = [];
    batch.parts.forEach((p, i) => {
      const text = texts[i];
      const stored = text === null || text === undefined ? [] : (JSON.parse(text) as NormalizedCall[]);
      for (const index of p.indexes) calls.push(stored[index - p.part]);
    });
    return calls;
  }

  /** Queues on `tx` the end of `destinationId`'s hold on the batch. */
  queueRelease(tx: ChainableCommander, batchId: string, destinationId: string): void {
    (tx as unknown as QueuedBatchCommands).releaseBatch(1, this.key(batchId), destinationId);
  }

  /** Ends `destinationId`'s hold on the batch now: one script, for a batch on another shard than the job. */
  async release(batchId: string, destinationId: string): Promise<void> {
    const script = this.redis as unknown as { releaseBatch(...args: string[]): Promise<unknown> };
    await script.releaseBatch('1', this.key(batchId), destinationId);
  }
}

/** The route entries ("r") less the duplicates ("x"); undefined when there are none (routed, or nothing stored). */
function routable(text: string | null | undefined, excluded: string | null | undefined): RouteEntry[] | undefined {
  if (text === null || text === undefined) return undefined;
  const entries = JSON.parse(text) as RouteEntry[];
  if (!excluded) return entries;
  const skip = new Set(excluded.split(',').map(Number));
  return entries.filter((e) => !skip.has(e.index));
}

/** The intake step answered something else than one verdict per request. */
function malformedIntakeAnswer(answer: unknown): Error {
  return new Error(`redis: the intake step answered ${JSON.stringify(answer)?.slice(0, 200)}`);
}
