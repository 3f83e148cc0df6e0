/**
 * Call batches: the calls ingest accepts within one flush, written to Redis once and read by
 * reference afterwards (docs/delivery.md, "The job model"). A batch is a hash,
 * `<prefix>:batch:<batchId>`:
 *   "<index>"            one call, the normalized call's JSON; indexes count the flush's calls
 *   "r"                  the route entries (what the router needs of each call), until routed
 *   "h"                  how many destinations still need the calls, once routed
 *   "d:<destinationId>"  present while that destination's first round has not finished
 * The route job (same id) is added in the MULTI that writes the batch. The router reads only "r",
 * and in one step deletes it and names the destinations that hold the batch; each destination's
 * delivery job reads its calls, and after its first round (calls to retry move into the job itself)
 * releases its hold; the last release deletes the batch. Deleting "r" is what makes routing a batch
 * twice harmless, and the per-destination field what makes a release count once.
 */
import type { ChainableCommander, Redis } from 'ioredis';
import type { NormalizedCall, RouteEntry } from '@eventrelay/config';

// KEYS: batch, then one rate key per request, then (when the dedupe TTL is not 0) one dedupe key
// per call. ARGV: dedupe TTL (s), number of requests, then per request its limit and its number of
// calls, then per call its JSON and its route entry's JSON. A request over its source's limit
// stores nothing; a call whose messageId is already claimed is a duplicate. Returns per request -1
// (over the limit) or one 0 (stored) / 1 (duplicate) per call. The claim (SET NX) and the store are
// one step, so a call is claimed exactly when it is stored: concurrent flushes, on this process or
// another, can never both store it.
const INTAKE = `
local ttl = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local rateKey = 1
local dedupeKey = 1 + n
local arg = 3 + 2 * n
local index = 0
local out = {}
local fields = {}
local entries = {}
for i = 1, n do
  local limit = tonumber(ARGV[1 + 2 * i])
  local count = tonumber(ARGV[2 + 2 * i])
  rateKey = rateKey + 1
  local used = redis.call('INCR', KEYS[rateKey])
  if used == 1 then redis.call('EXPIRE', KEYS[rateKey], 2) end
  if used > limit then
    out[i] = -1
    index = index + count
    arg = arg + 2 * count
    if ttl > 0 then dedupeKey = dedupeKey + count end
  else
    local verdicts = {}
    for j = 1, count do
      local fresh = true
      if ttl > 0 then
        dedupeKey = dedupeKey + 1
        fresh = redis.call('SET', KEYS[dedupeKey], '1', 'NX', 'EX', ttl) ~= false
      end
      if fresh then
        fields[#fields + 1] = tostring(index)
        fields[#fields + 1] = ARGV[arg]
        entries[#entries + 1] = ARGV[arg + 1]
        verdicts[j] = 0
      else
        verdicts[j] = 1
      end
      index = index + 1
      arg = arg + 2
    end
    out[i] = verdicts
  end
end
if #entries > 0 then
  redis.call('HSET', KEYS[1], 'r', '[' .. table.concat(entries, ',') .. ']')
  for i = 1, #fields, 1000 do redis.call('HSET', KEYS[1], unpack(fields, i, math.min(i + 999, #fields))) end
end
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
redis.call('HSET', KEYS[1], unpack(args))
return 1
`;

// KEYS: batch. ARGV: destination. Ends that destination's hold, once; the last hold deletes the
// batch. Returns 1 when this call released the hold, 0 when it was released before.
const RELEASE = `
if redis.call('HDEL', KEYS[1], 'd:' .. ARGV[1]) == 0 then return 0 end
if redis.call('HINCRBY', KEYS[1], 'h', -1) <= 0 then redis.call('DEL', KEYS[1]) end
return 1
`;

interface BatchCommands {
  releaseBatch(numKeys: number, ...args: string[]): Promise<number>;
}

/** The same scripts queued on a MULTI: each returns the MULTI. */
interface QueuedBatchCommands {
  intakeBatch(numKeys: number, ...args: (string | number)[]): ChainableCommander;
  planBatch(numKeys: number, ...args: string[]): ChainableCommander;
  releaseBatch(numKeys: number, ...args: string[]): ChainableCommander;
}

/** One request of a flush: its rate window and its calls, each with its dedupe key when dedupe is on. */
export interface IntakeRequest {
  readonly rateKey: string;
  readonly ratePerSecond: number;
  readonly calls: readonly { readonly json: string; readonly entry: RouteEntry; readonly dedupeKey?: string }[];
}

/** Per request of a flush: over its limit, or for each call whether it was a duplicate. */
export type IntakeVerdict = { readonly kind: 'rate_limited' } | { readonly kind: 'stored'; readonly duplicate: readonly boolean[] };

export function callBatchKey(prefix: string, batchId: string): string {
  return `${prefix}:batch:${batchId}`;
}

/** Makes the batch scripts callable on `redis` and on the MULTIs made from it. */
function defineBatchCommands(redis: Redis): BatchCommands {
  const commands = redis as unknown as Partial<QueuedBatchCommands>;
  if (typeof commands.intakeBatch !== 'function') redis.defineCommand('intakeBatch', { lua: INTAKE });
  if (typeof commands.planBatch !== 'function') redis.defineCommand('planBatch', { lua: PLAN });
  if (typeof commands.releaseBatch !== 'function') redis.defineCommand('releaseBatch', { lua: RELEASE });
  return redis as unknown as BatchCommands;
}

export class CallBatches {
  private readonly commands: BatchCommands;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    this.commands = defineBatchCommands(redis);
  }

  key(batchId: string): string {
    return callBatchKey(this.prefix, batchId);
  }

  /**
   * Queues on `tx` (a MULTI made from this connection) the step that rate-limits, dedupes and
   * stores a flush; read its answer with `intakeVerdicts`. `dedupeTtlS` 0 turns dedupe off.
   * Calls are numbered across the flush in the order given.
   */
  queueIntake(tx: ChainableCommander, batchId: string, requests: readonly IntakeRequest[], dedupeTtlS: number): void {
    const keys = [this.key(batchId), ...requests.map((r) => r.rateKey)];
    if (dedupeTtlS > 0) for (const r of requests) for (const c of r.calls) keys.push(c.dedupeKey ?? '');
    const args: (string | number)[] = [dedupeTtlS, requests.length];
    for (const r of requests) args.push(r.ratePerSecond, r.calls.length);
    for (const r of requests) for (const c of r.calls) args.push(c.json, JSON.stringify(c.entry));
    (tx as unknown as QueuedBatchCommands).intakeBatch(keys.length, ...keys, ...args);
  }

  /** The intake step's answer, per request. */
  static intakeVerdicts(answer: unknown, requests: number): IntakeVerdict[] {
    const raw = answer as (number | number[])[];
    if (!Array.isArray(raw) || raw.length !== requests) throw new Error(`redis: the intake step answered ${JSON.stringify(answer)?.slice(0, 200)}`);
    return raw.map((r) => (r === -1 || !Array.isArray(r) ? { kind: 'rate_limited' } : { kind: 'stored', duplicate: r.map((v) => v === 1) }));
  }

  /** The batch's route entries, or undefined when it was routed before (or nothing of it was stored). */
  async routeEntries(batchId: string): Promise<RouteEntry[] | undefined> {
    const text = await this.redis.hget(this.key(batchId), 'r');
    return text === null ? undefined : (JSON.parse(text) as RouteEntry[]);
  }

  /**
   * The calls of a batch not routed yet, by source (in index order), as stored: for tests and
   * inspection. Empty when the batch was routed or holds nothing.
   */
  async contents(batchId: string): Promise<{ sourceId: string; calls: NormalizedCall[] }[]> {
    const fields = await this.redis.hgetall(this.key(batchId));
    const entries = fields['r'] === undefined ? [] : (JSON.parse(fields['r']) as RouteEntry[]);
    const bySource = new Map<string, NormalizedCall[]>();
    for (const entry of [...entries].sort((a, b) => a.index - b.index)) {
      const text = fields[String(entry.index)];
      if (text === undefined) continue;
      let list = bySource.get(entry.sourceId);
      if (!list) bySource.set(entry.sourceId, (list = []));
      list.push(JSON.parse(text) as NormalizedCall);
    }
    return [...bySource].map(([sourceId, calls]) => ({ sourceId, calls }));
  }

  /** Queues on `tx` the step that marks the batch routed and names the destinations holding it. */
  queuePlan(tx: ChainableCommander, batchId: string, destinationIds: readonly string[]): void {
    (tx as unknown as QueuedBatchCommands).planBatch(1, this.key(batchId), ...destinationIds);
  }

  /**
   * The calls at `indexes` (null where a call is missing), or undefined when `destinationId` no
   * longer holds the batch: its first round finished before (a job run again after a crash).
   */
  async readCalls(batchId: string, destinationId: string, indexes: readonly number[]): Promise<(string | null)[] | undefined> {
    const [hold, ...calls] = await this.redis.hmget(this.key(batchId), `d:${destinationId}`, ...indexes.map(String));
    return hold === null || hold === undefined ? undefined : calls;
  }

  /** Queues on `tx` the end of `destinationId`'s hold on the batch. */
  queueRelease(tx: ChainableCommander, batchId: string, destinationId: string): void {
    (tx as unknown as QueuedBatchCommands).releaseBatch(1, this.key(batchId), destinationId);
  }

  /** Ends `destinationId`'s hold now; true when this call ended it. */
  async release(batchId: string, destinationId: string): Promise<boolean> {
    return (await this.commands.releaseBatch(1, this.key(batchId), destinationId)) === 1;
  }
}
