/**
 * Puts accepted calls on the router's queue, coalescing the requests that arrive in the same tick
 * so that Redis sees three round trips per tick instead of three per request:
 *   1. gate script: count the request against its source's per-second limit and look up which
 *      messageIds were already accepted (dedupe);
 *   2. addBulk: one route job per request holding its new calls (the durable write, in one MULTI);
 *   3. mark script: remember the enqueued messageIds for the dedupe window (sent, not awaited).
 * Marking after the write, not before, means a crash between 2 and 3 can only let a duplicate
 * through (the router's deterministic job ids absorb it), never lose a call that was answered 200.
 * When a step fails or times out, the request is answered 503: its calls may or may not have been
 * written, and the client's retry is safe because repeats are deduplicated downstream.
 */
import type { Redis } from 'ioredis';
import type { Queue } from 'bullmq';
import { UnavailableError, queueCatalog, type NormalizedCall, type RouteJob } from '@eventrelay/config';

export interface Submission {
  readonly sourceId: string;
  readonly requestId: string;
  readonly ratePerSecond: number;
  /** A messageId repeated within the submission counts as a duplicate, like one seen before. */
  readonly calls: readonly NormalizedCall[];
}

/** `duplicateIndexes`: which of the submission's calls were duplicates (for the metrics by type). */
export type SubmitResult = { kind: 'accepted'; enqueued: number; duplicates: number; duplicateIndexes: readonly number[] } | { kind: 'rate_limited'; resetAtEpochSeconds: number };

interface Pending {
  readonly sub: Submission;
  readonly resolve: (r: SubmitResult) => void;
  readonly reject: (e: unknown) => void;
}

const GATE = `
local n = tonumber(ARGV[1])
local out = {}
local k = n + 1
for i = 1, n do
  local limit = tonumber(ARGV[1 + i])
  local count = tonumber(ARGV[1 + n + i])
  local used = redis.call('INCR', KEYS[i])
  if used == 1 then redis.call('EXPIRE', KEYS[i], 2) end
  if used > limit then
    out[i] = -1
    k = k + count
  else
    local seen = {}
    for j = 1, count do
      seen[j] = redis.call('EXISTS', KEYS[k])
      k = k + 1
    end
    out[i] = seen
  end
end
return out`;

const MARK = `
for i = 1, #KEYS do redis.call('SET', KEYS[i], '1', 'EX', ARGV[1]) end
return #KEYS`;

interface Scripts {
  intakeGate(numKeys: number, ...args: (string | number)[]): Promise<(number | number[])[]>;
  intakeMark(numKeys: number, ...args: (string | number)[]): Promise<number>;
}

/** Enough to keep one flush's script and MULTI small; the rest waits for the next tick. */
const MAX_CALLS_PER_FLUSH = 5000;

export interface IntakeWriterOptions {
  readonly redis: Redis;
  readonly queue: Queue<RouteJob>;
  readonly prefix: string;
  readonly dedupeWindowSeconds: number;
  readonly clock: () => number;
  readonly onMarkFailed: (err: unknown) => void;
}

export class IntakeWriter {
  private pending: Pending[] = [];
  private pendingCalls = 0;
  private scheduled = false;
  private readonly scripts: Scripts;

  constructor(private readonly opts: IntakeWriterOptions) {
    opts.redis.defineCommand('intakeGate', { lua: GATE });
    opts.redis.defineCommand('intakeMark', { lua: MARK });
    this.scripts = opts.redis as unknown as Scripts;
  }

  submit(sub: Submission): Promise<SubmitResult> {
    return new Promise<SubmitResult>((resolve, reject) => {
      this.pending.push({ sub, resolve, reject });
      this.pendingCalls += sub.calls.length;
      if (this.pendingCalls >= MAX_CALLS_PER_FLUSH) this.flushNow();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flushNow());
      }
    });
  }

  private flushNow(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    this.pendingCalls = 0;
    if (batch.length > 0) void this.flush(batch);
  }

  private dedupeKey(sourceId: string, messageId: string): string {
    return `${this.opts.prefix}:dedupe:${sourceId}:${messageId}`;
  }

  private async flush(batch: Pending[]): Promise<void> {
    const second = Math.floor(this.opts.clock() / 1000);
    const dedupe = this.opts.dedupeWindowSeconds > 0;
    try {
      const rateKeys = batch.map((p) => `${this.opts.prefix}:rate:${p.sub.sourceId}:${second}`);
      const seenKeys = batch.map((p) => (dedupe ? p.sub.calls.map((c) => this.dedupeKey(p.sub.sourceId, c.messageId)) : []));
      const keys = [...rateKeys, ...seenKeys.flat()];
      const verdicts = await this.scripts.intakeGate(keys.length, ...keys, batch.length, ...batch.map((p) => p.sub.ratePerSecond), ...seenKeys.map((k) => k.length));

      const results: SubmitResult[] = [];
      const jobs: { name: string; data: RouteJob; opts: { jobId: string } }[] = [];
      const toMark: string[] = [];
      const claimedThisFlush = new Set<string>();
      batch.forEach((p, i) => {
        const verdict = verdicts[i];
        if (verdict === -1 || verdict === undefined) {
          results.push({ kind: 'rate_limited', resetAtEpochSeconds: second + 1 });
          return;
        }
        const seen = Array.isArray(verdict) ? verdict : [];
        const keysOfRequest = seenKeys[i] ?? [];
        const duplicateIndexes: number[] = [];
        const fresh = p.sub.calls.filter((_c, j) => {
          const key = keysOfRequest[j];
          if (key === undefined) return true;
          if (seen[j] === 1 || claimedThisFlush.has(key)) {
            duplicateIndexes.push(j);
            return false;
          }
          claimedThisFlush.add(key);
          toMark.push(key);
          return true;
        });
        if (fresh.length > 0) jobs.push({ name: queueCatalog.route.jobName, data: { sourceId: p.sub.sourceId, requestId: p.sub.requestId, calls: fresh }, opts: { jobId: p.sub.requestId } });
        results.push({ kind: 'accepted', enqueued: fresh.length, duplicates: duplicateIndexes.length, duplicateIndexes });
      });

      if (jobs.length > 0) await this.opts.queue.addBulk(jobs);
      if (toMark.length > 0) {
        // Not awaited: the calls are already durable, and a failed mark only weakens dedupe. The
        // mark is written to the connection before any answer goes out, and Redis runs one
        // connection's commands in order, so a repeat sent after the answer is gated after it.
        this.scripts.intakeMark(toMark.length, ...toMark, this.opts.dedupeWindowSeconds).catch(this.opts.onMarkFailed);
      }
      batch.forEach((p, i) => p.resolve(results[i] as SubmitResult));
    } catch (err) {
      const unavailable = new UnavailableError('service_unavailable', 'the event store is unavailable; retry later (repeats are deduplicated)', 1, { cause: err });
      batch.forEach((p) => p.reject(unavailable));
    }
  }
}
