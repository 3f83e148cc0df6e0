/**
 * Puts accepted calls on the router's queue, coalescing every request that arrives within one
 * short window (INGEST_FLUSH_MS, or sooner when the flush holds MAX_CALLS_PER_FLUSH calls or
 * MAX_BYTES_PER_FLUSH of them) into one call batch and one route job, written in ONE MULTI:
 *   1. the calls, one field per source, as the JSON text serialized here;
 *   2. the intake step (one script): pace each request's calls against its source's limit (calls
 *      per second, taken evenly) and count its claims' bytes against its budget (a request is
 *      stored whole or refused whole),
 *      claim each call's messageId for the dedupe window (SET NX) and write the route entries of
 *      what is to be routed (the calls of requests within their limit, duplicates listed apart),
 *      or delete the batch when nothing is;
 *   3. the route job holding the batch id.
 * All land or none does, so a call is routed exactly when its messageId is claimed, and a route
 * job exists whenever its batch does: a crash can never leave a claimed call unrouted (the
 * client's retry would then be deduped and the call lost), and no concurrent flush, here or in
 * another replica, can store the same messageId twice. When the step fails or times out, every
 * request of the flush is answered 503: its calls may or may not have been written, and the
 * client's retry is deduped when they were.
 * A source found over its limit (one of its requests refused) is answered 429 without asking Redis
 * until that request would have fitted, and one over its claim budget for the rest of that second,
 * so a flood costs Redis about one command per refused wait per source.
 * Durable mode (`durable`): a WAIT follows the MULTI on the same connection, and the flush's
 * requests are answered only once that many replicas hold its writes; fewer within the timeout is
 * 503 not_replicated for every request of the flush (the calls are on the primary and may still be
 * delivered; the client's retry is deduped, and its own WAIT covers them too, since a replica
 * receives the primary's writes in order). A WAIT holds its connection until it answers, so flushes
 * would queue behind one another, each waiting out the timeout while the replicas are away: in
 * durable mode one flush is in flight at a time (a group commit: what arrives meanwhile is the next
 * flush), and past MAX_PENDING_FLUSHES flushes' worth of calls waiting, requests are refused at once.
 */
import { randomUUID } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import type { Queue } from 'bullmq';
import { UnavailableError, type NormalizedCall, type RouteJob } from '@eventrelay/config';
import { execAll, queueJobAdd } from '@eventrelay/runtime';
import type { CallBatches } from '@eventrelay/stores';

export interface Submission {
  readonly sourceId: string;
  readonly ratePerSecond: number;
  /** Bytes its dedupe claims may hold (domain/source-budget.ts); undefined: no budget. */
  readonly budgetBytes?: number;
  /** A messageId repeated within the submission counts as a duplicate, like one seen before. */
  readonly calls: readonly NormalizedCall[];
}

/** A request refused whole: over its source's limit, or over its budget. */
export type Refusal =
  /** `retryAtMs`: when (epoch ms) the same request would fit in its source's pace. */
  | { kind: 'rate_limited'; retryAtMs: number }
  /** `freesAtEpochSeconds`: the earliest some of the source's budget is free again. */
  | { kind: 'over_budget'; freesAtEpochSeconds: number };

/** `duplicateIndexes`: which of the submission's calls were duplicates (for the metrics by type). */
export type SubmitResult = { kind: 'accepted'; enqueued: number; duplicates: number; duplicateIndexes: readonly number[] } | Refusal;

interface Pending {
  readonly sub: Submission;
  /** The calls as stored, serialized when submitted (spread over the window, not at flush time). */
  readonly json: string;
  readonly resolve: (r: SubmitResult) => void;
  readonly reject: (e: unknown) => void;
}

/** Keeps one flush's step, job and the router's and delivery's reads of it moderate. */
export const MAX_CALLS_PER_FLUSH = 1000;
/** About two full batch requests (500 KB each): a request is never split across flushes. */
const MAX_BYTES_PER_FLUSH = 1024 * 1024;
/** Durable mode: how much may wait for the flush in flight before requests are refused at once. */
const MAX_PENDING_FLUSHES = 4;

export interface IntakeWriterOptions {
  readonly batches: CallBatches;
  /** A MULTI on which route jobs can be added (runtime transactionsOn of the route queue). */
  readonly transaction: () => ChainableCommander;
  readonly queue: Queue<RouteJob>;
  readonly dedupeWindowSeconds: number;
  /** How long the first request of a flush waits for others; 0 = until the end of the event-loop turn. */
  readonly flushMs: number;
  readonly clock: () => number;
  readonly newBatchId?: () => string;
  /** Durable mode: answer only once `replicas` replicas hold the flush (INGEST_DURABLE_REPLICAS > 0). */
  readonly durable?: DurableWrites;
}

interface DurableWrites {
  readonly replicas: number;
  readonly timeoutMs: number;
  /**
   * Redis WAIT on the connection the MULTIs write on (runtime replicaWaitOn): how many replicas
   * confirmed. `written` is the MULTI's answer, for a connection that must see it before it waits.
   */
  readonly wait: (replicas: number, timeoutMs: number, written: Promise<unknown>) => Promise<number>;
  /** Each flush's wait, for the metrics. */
  readonly observe?: (seconds: number, confirmed: boolean) => void;
}

export class IntakeWriter {
  private pending: Pending[] = [];
  private pendingCalls = 0;
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  /** Flushes written and not yet answered; in durable mode at most one. */
  private inFlight = 0;
  /** Sources refused over their limit or budget, and until when (epoch ms) they are answered so without asking Redis. */
  private readonly refused = new Map<string, { untilMs: number; refusal: Refusal }>();
  private readonly newBatchId: () => string;

  constructor(private readonly opts: IntakeWriterOptions) {
    this.newBatchId = opts.newBatchId ?? randomUUID;
  }

  /**
   * The answer a source gets without asking Redis, for a while after one of its requests was found
   * over its limit or its budget; undefined when it may be stored.
   */
  refusal(sourceId: string): Refusal | undefined {
    const known = this.refused.get(sourceId);
    if (known === undefined) return undefined;
    if (this.opts.clock() < known.untilMs) return known.refusal;
    this.refused.delete(sourceId);
    return undefined;
  }

  submit(sub: Submission): Promise<SubmitResult> {
    const refused = this.refusal(sub.sourceId);
    if (refused) return Promise.resolve(refused);
    const json = JSON.stringify(sub.calls);
    if (
      this.opts.durable &&
      (this.pendingCalls + sub.calls.length > MAX_PENDING_FLUSHES * MAX_CALLS_PER_FLUSH ||
        this.pendingBytes + json.length > MAX_PENDING_FLUSHES * MAX_BYTES_PER_FLUSH)
    )
      return Promise.reject(
        new UnavailableError(
          'not_replicated',
          'the replicas are behind: too many calls already wait for them; nothing was stored; retry later',
          1,
        ),
      );
    return new Promise<SubmitResult>((resolve, reject) => {
      this.pending.push({ sub, json, resolve, reject });
      this.pendingCalls += sub.calls.length;
      this.pendingBytes += json.length;
      if (this.pendingCalls >= MAX_CALLS_PER_FLUSH || this.pendingBytes >= MAX_BYTES_PER_FLUSH) this.flushNow();
      else if (this.timer === undefined)
        this.timer = this.opts.flushMs > 0 ? setTimeout(() => this.flushNow(), this.opts.flushMs) : setImmediate(() => this.flushNow());
    });
  }

  private flushNow(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer as NodeJS.Timeout);
      clearImmediate(this.timer as NodeJS.Immediate);
      this.timer = undefined;
    }
    // Durable mode: the flush in flight takes what waits when it is answered.
    if (this.opts.durable && this.inFlight > 0) return;
    const batch = this.takeFlush();
    if (batch.length === 0) return;
    this.inFlight++;
    void this.flush(batch).finally(() => {
      this.inFlight--;
      if (this.opts.durable && this.pending.length > 0) this.flushNow();
    });
  }

  /**
   * The next flush: the requests waiting, oldest first, until it holds MAX_CALLS_PER_FLUSH calls or
   * MAX_BYTES_PER_FLUSH (the request that reaches either is in it). Without durable mode that is
   * everything waiting, since a flush starts as soon as either is reached.
   */
  private takeFlush(): Pending[] {
    let calls = 0;
    let bytes = 0;
    let n = 0;
    while (n < this.pending.length && calls < MAX_CALLS_PER_FLUSH && bytes < MAX_BYTES_PER_FLUSH) {
      const p = this.pending[n++] as Pending;
      calls += p.sub.calls.length;
      bytes += p.json.length;
    }
    const batch = this.pending.splice(0, n);
    this.pendingCalls -= calls;
    this.pendingBytes -= bytes;
    return batch;
  }

  private async flush(batch: Pending[]): Promise<void> {
    const nowMs = this.opts.clock();
    const batchId = this.newBatchId();
    try {
      const tx = this.opts.transaction();
      const verdictsOf = this.opts.batches.queueIntake(
        tx,
        batchId,
        batch.map((p) => ({
          sourceId: p.sub.sourceId,
          ratePerSecond: p.sub.ratePerSecond,
          ...(p.sub.budgetBytes !== undefined ? { budgetBytes: p.sub.budgetBytes } : {}),
          calls: p.sub.calls,
          callsJson: p.json,
        })),
        { nowMs, dedupeTtlS: this.opts.dedupeWindowSeconds },
      );
      queueJobAdd(tx, this.opts.queue, { batchId }, batchId);
      const written = execAll(tx);
      // Sent right behind the MULTI, on its connection, in the same write to the socket: WAIT
      // counts the replicas holding everything this connection wrote, so the flush included.
      const confirmed = this.confirm(written);
      // [the calls' HSET, the intake step, the route job]
      const verdicts = verdictsOf((await written)[1]);
      if (!(await confirmed)) {
        const { replicas, timeoutMs } = this.opts.durable!;
        const notReplicated = new UnavailableError(
          'not_replicated',
          `the calls reached the primary but not ${replicas} replica(s) within ${timeoutMs} ms; retry later (repeats are deduplicated)`,
          1,
        );
        batch.forEach((p) => p.reject(notReplicated));
        return;
      }
      batch.forEach((p, i) => {
        const verdict = verdicts[i];
        if (verdict === undefined || verdict.kind !== 'stored') {
          const refusal: Refusal =
            verdict?.kind === 'over_budget'
              ? { kind: 'over_budget', freesAtEpochSeconds: verdict.freesAtS }
              : { kind: 'rate_limited', retryAtMs: verdict?.retryAtMs ?? nowMs };
          // Over the budget, room comes back by the hour: asking again within the second is waste.
          // Over the limit, a smaller request may fit before this one would: at most a second.
          const untilMs =
            refusal.kind === 'over_budget' ? (Math.floor(nowMs / 1000) + 1) * 1000 : Math.min(refusal.retryAtMs, nowMs + 1000);
          this.refused.set(p.sub.sourceId, { untilMs, refusal });
          p.resolve(refusal);
          return;
        }
        const duplicateIndexes: number[] = [];
        verdict.duplicate.forEach((d, j) => d && duplicateIndexes.push(j));
        p.resolve({
          kind: 'accepted',
          enqueued: p.sub.calls.length - duplicateIndexes.length,
          duplicates: duplicateIndexes.length,
          duplicateIndexes,
        });
      });
    } catch (err) {
      const unavailable = new UnavailableError(
        'service_unavailable',
        'the event store is unavailable; retry later (repeats are deduplicated)',
        1,
        { cause: err },
      );
      batch.forEach((p) => p.reject(unavailable));
    }
  }

  /**
   * True when durable mode is off, or once the replicas confirmed the flush; false when fewer did
   * within the timeout or the WAIT failed. Sent before the MULTI's answer is awaited.
   */
  private confirm(written: Promise<unknown>): Promise<boolean> {
    const durable = this.opts.durable;
    if (!durable) return Promise.resolve(true);
    const started = this.opts.clock();
    return durable.wait(durable.replicas, durable.timeoutMs, written).then(
      (n) => {
        const ok = n >= durable.replicas;
        durable.observe?.((this.opts.clock() - started) / 1000, ok);
        return ok;
      },
      // Never rejects: when the MULTI failed too (the connection went), its error answers the flush.
      () => false,
    );
  }
}
