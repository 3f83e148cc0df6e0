/**
 * The deliver worker's processor: the BullMQ edge. It loads a job's calls (from their call batch,
 * or held in the job), lets the gate admit it, runs it, and turns what became of each call into
 * queue operations with ONE MULTI (the commit) and a move:
 *   - dead letters of the calls that died;
 *   - the job's data rewritten to hold the calls still to go, each with its retry state (a call
 *     that was delivered is never sent again by this job);
 *   - for a batch job, the end of its hold on the batch (its calls are now all delivered, dead or
 *     held in the job);
 *   - the change of the destination's count and bytes of calls held for a retry (the job's
 *     `counted` and `countedBytes`);
 * then the job is moved to the delayed set until its next call is due, or completed.
 * At-least-once: until the commit lands, the job stays active and locked to this process; if the
 * process dies, the lock lapses and another worker runs it again from where the last commit left
 * it. A batch job run again after its commit finds its hold ended and does nothing.
 */
import { DelayedError, type Job } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import type { BatchRef, DeadLetter, DeliverJob, DeliveryItem, Destination, RetryState } from '@eventrelay/config';
import { callDeliveryId, heldFromLegacyDeliverJob } from '@eventrelay/config';
import { LabelTally, execAll, queueJobRewrite, type Logger } from '@eventrelay/runtime';
import type { CallBatches, DeadLetterStore, RetryBacklog, StatsCounters } from '@eventrelay/stores';
import { NOT_CAPPED, createCapNotes, type RetryCapped } from './cap-notes.js';
import { createDestinationHealth } from './destination-health.js';
import { activeTargets, lastRound, planRound, policyOf, probeRound, renderBodies, runDelivery, type DeliverDeps } from './deliver-round.js';
import type { OperatorEvents } from './operator-events.js';
import type { DestinationEpisodes } from '../adapters/destination-episodes.js';
import type { DestinationSwitches } from '../adapters/destination-switches.js';
import { withoutErased, type Tombstones } from './erasures.js';
import { recordNoticeOutcomes, type Receipts } from './receipts.js';
import { queueReplayOutcomes, type ReplayOutcomes, type ReplayProgress } from './replays.js';
import type { DestinationGate } from '../destination-gate.js';
import { statusClass } from '../domain/outcome.js';
import { countedBytes, countedCalls, heldBytes, heldCallBytes, retryHold, type RetryCap } from '../domain/retry-cap.js';
import { retryBy } from '../domain/schedule.js';
import { settleRound, type CallRun, type Settled } from '../domain/settle.js';
import type { DeliveryMetrics } from '../metrics.js';
import { originOf } from '../domain/url-origin.js';
import { parkedForTurn, turnOf, type TurnDeps } from './turns.js';
import { SentRounds } from './sent-rounds.js';

export interface WorkerDeps extends DeliverDeps, TurnDeps {
  readonly destinations: { get(id: string): Destination | undefined; refresh(): Promise<void>; onLoad?(listener: () => void): void };
  readonly gate: DestinationGate;
  /** The batches of the route shard a job's batch is on. */
  readonly batchesOf: (batch: BatchRef) => Pick<CallBatches, 'readCalls' | 'queueRelease' | 'release' | 'prefix'>;
  /** Deletion tombstones: the calls of erased users are dropped before sending (docs/spec.md §6). */
  readonly tombstones: Tombstones;
  /** The deletion receipts: what became of each delete notice, per regulation and destination. */
  readonly receipts: Receipts;
  /** Each replay's progress: the final outcome of its calls, counted in the commit. */
  readonly replays: ReplayProgress;
  readonly deadLetters: Pick<DeadLetterStore, 'queueAdd' | 'evictionOf'>;
  /** DELIVERY_DEAD_LETTER_MAX_PER_DESTINATION, named in the audit entry when a cap is reached. */
  readonly deadLetterMax: number;
  /** DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION, likewise. */
  readonly deadLetterMaxBytes: number;
  /** What operators are told (audit log, notification webhook): caps reached, breakers, disabled URLs. */
  readonly events: OperatorEvents;
  /** Makes each operator event happen once per episode across processes. */
  readonly episodes: Pick<DestinationEpisodes, 'breakerOpened' | 'breakerClosed' | 'deadLettering'>;
  /** Config writes of delivery's own: a URL that answered 410, a destination failing too long. */
  readonly switches: DestinationSwitches;
  /** DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: a destination's concurrency unless it sets maxConcurrentRequests. */
  readonly maxInFlight: number;
  /** Each destination's count and bytes of calls held for a retry, changed in the commit. */
  readonly retryBacklog: Pick<RetryBacklog, 'queueChange' | 'changeOf' | 'held'>;
  /** DELIVERY_RETRY_MAX_PER_DESTINATION: calls held for a retry per destination; 0 = no cap. */
  readonly retryMax: number;
  /** DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION: bytes of those calls per destination; 0 = no cap. */
  readonly retryMaxBytes: number;
  /** A MULTI on the connection the batches and dead letters live on. */
  readonly transaction: () => ChainableCommander;
  readonly metrics: DeliveryMetrics;
  /** The per-minute counts behind the admin stats; batched, so counting costs no Redis command here. */
  readonly stats: Pick<StatsCounters, 'countDestination'>;
  readonly logger: Logger;
  /** Moves the active job back to delayed until `at` (runtime putJobBack), for a park; with `data`, what it carries back. */
  readonly putBack: (job: Job, at: number, token: string | undefined, data?: DeliverJob) => Promise<void>;
  /** True once shutdown began: calls not started yet stay in the job, unattempted. */
  readonly stopping?: () => boolean;
  /** How many rounds sent but not committed (Redis full) the process keeps; about the jobs it runs at once. */
  readonly keptRoundsMax?: number;
}

/** A round's requests and what they returned, kept until its commit lands (SentRounds). */
interface SentRound {
  readonly run: Awaited<ReturnType<typeof runDelivery>>;
  /** The round carried the breaker's probe. */
  readonly probe: boolean;
  readonly attempts: { attempts: number; failed: number };
}

/**
 * Every call of a job, loaded, less those a deletion erased (`erased` counts them); `missing`
 * counts batch calls that were not found (never expected).
 */
interface Loaded {
  readonly items: DeliveryItem[];
  readonly missing: number;
  readonly erased: number;
}

export function createDeliverProcessor(deps: WorkerDeps): (job: Job<DeliverJob>, token?: string) => Promise<void> {
  const { metrics, logger } = deps;
  const stopping = deps.stopping ?? (() => false);
  const caps = createCapNotes(deps);
  const health = createDestinationHealth(deps);
  const rounds = new SentRounds<SentRound>(deps.keptRoundsMax ?? 1_000);
  // A held call's bytes do not change while it is held (heldCallBytes): each is measured once per
  // run, for the caps' check and the commit alike, keyed by the call as the run loaded it.
  const measured = new WeakMap<DeliveryItem['call'], number>();
  const bytesOf = (item: DeliveryItem): number => {
    let bytes = measured.get(item.call);
    if (bytes === undefined) measured.set(item.call, (bytes = heldCallBytes(item)));
    return bytes;
  };

  /** The job's destination, reloading the config first when it is unknown or disabled here. */
  async function reloadedDestination(id: string): Promise<Destination | undefined> {
    // Router and webhook-delivery reload config on their own clocks: a destination created or
    // enabled a moment ago may be known to the router first. Never judge on a stale view.
    await deps.destinations.refresh();
    return deps.destinations.get(id);
  }

  /** The job's calls; undefined when it is a batch job whose first round was committed before. */
  async function load(data: DeliverJob, shard: string): Promise<Loaded | undefined> {
    if (!('batch' in data)) return { ...(await withoutErased(deps.tombstones, data.calls)), missing: 0 };
    // The tombstone count is read in parallel with the batch: while nobody was erased, the hot
    // path gains one command and no round trip.
    const [calls, tombstones] = await Promise.all([
      deps.batchesOf(data.batch).readCalls(data.destinationId, data.batch),
      deps.tombstones.count(shard),
    ]);
    if (calls === undefined) return undefined;
    const items: DeliveryItem[] = [];
    let missing = 0;
    let i = 0;
    for (const part of data.batch.parts) {
      for (let k = 0; k < part.indexes.length; k++) {
        const call = calls[i++];
        if (call === undefined) missing++;
        else items.push({ sourceId: part.sourceId, call });
      }
    }
    return { ...(await withoutErased(deps.tombstones, items, tombstones)), missing };
  }

  /**
   * Holds the calls still to go to DELIVERY_RETRY_MAX_PER_DESTINATION and
   * DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION (see "The retry backlog cap"): the hold limit, when
   * the job would newly hold more than both allow, for the round to be settled again with.
   */
  async function retryCapOf(data: DeliverJob, settled: Settled): Promise<RetryCap | undefined> {
    const counted = countedCalls(data);
    if ((deps.retryMax === 0 && deps.retryMaxBytes === 0) || settled.pending.length <= counted) return undefined;
    // Calls newly held for a retry: the one read of the destination's count and bytes, never on
    // the all-2xx path. Jobs of one destination committing at once may each see the same room, so
    // the totals can overshoot the caps by the calls they newly hold together.
    const current = await deps.retryBacklog.held(data.destinationId);
    return retryHold(
      { sizes: settled.pending.map(bytesOf), counted, countedBytes: countedBytes(data) },
      { max: deps.retryMax, maxBytes: deps.retryMaxBytes, current: current.calls, currentBytes: current.bytes },
    );
  }

  /** A call's dead letter, under its letter id (one per call and destination). */
  function letterOf(data: DeliverJob, item: DeliveryItem, state: RetryState, reason: string): DeadLetter {
    return {
      jobId: callDeliveryId(data.destinationId, item.sourceId, item.call.messageId),
      job: { sourceId: item.sourceId, destinationId: data.destinationId, call: item.call },
      attempts: state.attempt,
      lastError: reason,
      urls: Object.entries(state.urls).map(([url, s]) => ({ url, error: s.lastError })),
      firstAttemptAt: new Date(state.firstAttemptAt).toISOString(),
      deadAt: new Date(deps.clock()).toISOString(),
    };
  }

  /**
   * Writes what the run left in one MULTI (dead letters, the calls still to go, the end of the
   * batch hold, the change of the destination's retry backlog), then moves the job: to delayed
   * until `at` while calls remain, else it completes. `capped`: letters that are calls a retry
   * backlog cap kept from being held, and the cap. `replayed`: what became of the calls, for the
   * progress of those that a replay put back. `closesBefore`: the breaker's closes when the job
   * started, for a job moved to delayed to come back at once after a close it missed
   * (backIfBreakerClosed).
   */
  async function commit(
    job: Job<DeliverJob>,
    token: string | undefined,
    letters: readonly DeadLetter[],
    pending: readonly DeliveryItem[],
    at: number | undefined,
    runs: number,
    capped: RetryCapped = NOT_CAPPED,
    replayed: ReplayOutcomes = {},
    closesBefore?: number,
  ): Promise<void> {
    const data = job.data;
    const tx = deps.transaction();
    for (const letter of letters) deps.deadLetters.queueAdd(tx, letter);
    // The job's data says how many of its calls the destination's count holds (`counted`) and
    // their bytes (`countedBytes`), and each changes with its total by the same difference in this
    // MULTI: the totals stay exactly the sums over the deliver jobs (docs/delivery.md, "The retry
    // backlog cap"). A job still holding the calls it had counted counts the same bytes (their
    // measure leaves out the retry state, which changes every round), so neither total changes.
    const counted = countedCalls(data);
    const countedSize = countedBytes(data);
    const bytes = heldBytes(data, pending, bytesOf);
    const change = pending.length - counted;
    const bytesChange = bytes - countedSize;
    const backlogChanges = change !== 0 || bytesChange !== 0 || capped.calls > 0;
    if (backlogChanges) deps.retryBacklog.queueChange(tx, data.destinationId, change, bytesChange, capped.calls);
    const due = at ?? deps.clock();
    let next: DeliverJob | undefined;
    if (pending.length > 0) {
      next = { destinationId: data.destinationId, calls: [...pending], runs, counted: pending.length, countedBytes: bytes };
      queueJobRewrite(tx, job, next, due);
    } else if ((counted > 0 || countedSize > 0) && 'calls' in data) {
      // The job completes once this lands. Should the process die before that, the job runs again
      // from its data, which must then no longer count the calls given back here.
      queueJobRewrite(tx, job, { ...data, counted: 0, countedBytes: 0 }, due);
    }
    // The hold on a batch of another shard (EVENTRELAY_SHARDS > 1) ends after the commit, in a
    // command of its own: should the process die in between, the batch stays until its TTL.
    const batch = 'batch' in data ? { id: data.batch.id, store: deps.batchesOf(data.batch) } : undefined;
    const releaseInCommit = batch !== undefined && batch.store.prefix === job.prefix;
    if (releaseInCommit) batch.store.queueRelease(tx, batch.id, data.destinationId);
    // Last on the MULTI: the answers read below are at the positions of what came before.
    const replays = 'calls' in data && queueReplayOutcomes(deps.replays, tx, data.destinationId, replayed);
    const commits = letters.length > 0 || pending.length > 0 || counted > 0 || countedSize > 0 || releaseInCommit || replays;
    const answers = commits ? await execAll(tx) : [];
    // Landed: a run of the job from now on starts from what this wrote, never from the kept round.
    if (job.id) rounds.committed(job.id);
    if (batch && !releaseInCommit) await batch.store.release(batch.id, data.destinationId);
    if (next) job.data = next;
    if (letters.length > 0) await caps.noteEvictions(data.destinationId, answers.slice(0, letters.length));
    // After the commit: a read of the destination's retry count and this MULTI stay close together.
    await health.noteDeadLetters(data.destinationId, letters);
    if (backlogChanges) await caps.noteRetryBacklog(data.destinationId, answers[letters.length], capped);
    if (pending.length > 0) {
      await job.moveToDelayed(due, token);
      if (closesBefore !== undefined) await backIfBreakerClosed(job, closesBefore);
      throw new DelayedError();
    }
  }

  return async (job, token) => {
    // A job of the shape written before jobs carried batches (queued across an upgrade) is read as
    // the job holding its call that it now is; its first commit writes it in that shape.
    const legacy = heldFromLegacyDeliverJob(job.data);
    if (legacy) job.data = legacy;
    const data = job.data;
    const base = { destinationId: data.destinationId, jobId: job.id };
    health.returned(job);
    const known = deps.destinations.get(data.destinationId);
    const destination = known?.enabled ? known : await reloadedDestination(data.destinationId);
    const runsBefore = 'calls' in data ? (data.runs ?? 0) : 0;
    if (!destination) {
      // Deleted: there is nowhere to deliver to, nor anyone to replay for.
      if ('calls' in data) await recordNoticeOutcomes(deps.receipts, data.destinationId, { dropped: data.calls });
      const calls = 'batch' in data ? data.batch.parts.reduce((n, p) => n + p.indexes.length, 0) : data.calls.length;
      metrics.messages.inc({ destination: data.destinationId, result: 'dropped' }, calls);
      logger.warn({ ...base, calls, outcome: 'dropped', reason: 'destination no longer exists' }, 'delivery.attempted');
      await commit(job, token, [], [], undefined, runsBefore);
      return;
    }

    // Every fetch of the job counts in attemptsStarted: those beyond its runs were parks.
    const parks = job.attemptsStarted - 1 - runsBefore;
    const loaded = await load(data, job.prefix);
    if (loaded === undefined) {
      logger.info({ ...base, calls: 0, outcome: 'already_done' }, 'delivery.attempted');
      return;
    }
    if (loaded.missing > 0) {
      metrics.messages.inc({ destination: data.destinationId, result: 'dropped' }, loaded.missing);
      logger.error({ ...base, missing: loaded.missing, batchId: 'batch' in data ? data.batch.id : undefined }, 'delivery.calls_missing');
    }
    const items = loaded.items;
    const erased = loaded.erased > 0 ? { erased: loaded.erased } : {};
    if (loaded.erased > 0) metrics.erased.inc({ destination: data.destinationId }, loaded.erased);

    if (!destination.enabled || activeTargets(destination).length === 0) {
      // Disabled: kept as dead letters, so the operator can replay once it is enabled again.
      const reason = destination.enabled
        ? 'every URL of the destination is disabled (410 Gone, or by an operator)'
        : 'destination is disabled';
      const outcomes = { deadLettered: items };
      await recordNoticeOutcomes(deps.receipts, data.destinationId, outcomes);
      const letters = items.map((item) =>
        letterOf(data, item, item.retry ?? { firstAttemptAt: deps.clock(), attempt: 0, urls: {} }, reason),
      );
      await commit(job, token, letters, [], undefined, runsBefore, NOT_CAPPED, outcomes);
      metrics.messages.inc({ destination: data.destinationId, result: 'dead_lettered' }, items.length);
      deps.stats.countDestination(data.destinationId, { dead: items.length });
      logger.warn({ ...base, calls: items.length, ...erased, outcome: 'dead_lettered', reason }, 'delivery.attempted');
      return;
    }

    // Sent before Redis refused its commit (full): committed now, not sent again (a batch job whose
    // commit did land stopped above, its hold gone).
    const kept = job.id ? rounds.take(job.id, data) : undefined;
    if (kept) {
      metrics.roundsResumed.inc();
      await finishRound(job, token, destination, items, erased, kept, deps.gate.breaker(data.destinationId).closes);
      return;
    }

    // A job woken before any of its calls is due (one waits on a Retry-After) reserves nothing,
    // goes through, and back to the delayed set.
    const planned = planRound(items, destination, deps.clock(), await renderBodies(items, destination));
    const closesBefore = deps.gate.breaker(data.destinationId).closes;
    const limits = {
      maxConcurrency: destination.settings.maxConcurrentRequests ?? deps.maxInFlight,
      maxRate: destination.settings.maxRequestsPerSecond ?? Number.POSITIVE_INFINITY,
    };
    const verdict = await deps.gate.enter(data.destinationId, parks, planned.requests, {
      caps: limits,
      turnAt: data.turnAt,
      queuedAt: job.timestamp,
    });
    const windowMs = policyOf(destination, deps.policy).windowMs;
    let mode: 'normal' | 'probe' | 'last' = verdict.kind === 'probe' ? 'probe' : 'normal';
    let round = mode === 'probe' ? probeRound(planned, windowMs, deps.clock()) : planned;
    // The probe's own request was reserved at its admission; the last attempts it carries were not.
    if (mode === 'probe' && round.requests > 1) deps.gate.reserveLast(data.destinationId, round.requests - 1);
    if (verdict.kind === 'park' && 'breaker' in verdict) {
      const last = lastRound(planned, windowMs, deps.clock());
      if (last.requests > 0) {
        // Calls at their window's end get their last attempt, breaker or not (docs/spec.md §4).
        deps.gate.reserveLast(data.destinationId, last.requests);
        mode = 'last';
        round = last;
      }
    }
    if (verdict.kind === 'park' && mode !== 'last') {
      let delayMs = verdict.delayMs;
      if ('breaker' in verdict) {
        // Disabled meanwhile: back at once, to be dead-lettered.
        if (await health.autoDisable(destination, deps.gate.breaker(data.destinationId))) delayMs = 0;
        else {
          const waited = await waitForBreaker(job, token, destination, items, runsBefore, delayMs, closesBefore);
          // Settled: the commit that started the calls' windows left none to hold (the cap).
          if (waited === 'settled') return;
          delayMs = waited;
        }
      }
      metrics.parked.inc();
      await deps.putBack(job, deps.clock() + delayMs, token);
      await backIfBreakerClosed(job, closesBefore);
      throw new DelayedError();
    }
    // The breaker is open and this job carries its probe: one request (or the last attempts of its
    // calls at their window's end, probeRound); the other calls wait.
    const probe = mode === 'probe';
    const turn = await turnOf(deps, data, verdict, round.requests, destination.settings.maxRequestsPerSecond);
    if (turn.kind === 'later') {
      // Admitted (go or probe): its requests' reservation ends unused.
      if (verdict.kind !== 'turn') deps.gate.leave(data.destinationId, undefined, round.requests);
      if (probe) deps.gate.breaker(data.destinationId).probeNotSent();
      metrics.parked.inc();
      const parked = parkedForTurn(data, turn, deps.clock());
      await deps.putBack(job, parked.at, token, parked.data);
      if (parked.data) job.data = parked.data;
      throw new DelayedError();
    }
    const places = deps.gate.places(data.destinationId, parks, round.requests, mode);
    let run: Awaited<ReturnType<typeof runDelivery>>;
    try {
      run = await runDelivery(data.destinationId, round, destination, deps, places, stopping);
    } finally {
      places.done();
    }
    const sent: SentRound = { run, probe, attempts: countAttempts(metrics, data.destinationId, run.calls) };
    // From here on every write may be refused (Redis full): the requests are not sent again.
    if (job.id) rounds.keep(job.id, data, sent);
    await finishRound(job, token, destination, items, erased, sent, closesBefore);
  };

  /**
   * The end of a round whose requests were sent (now, or before a commit Redis refused): each
   * call's outcome settled, then committed; counted and logged once the commit landed, so a round
   * committed late is counted once.
   */
  async function finishRound(
    job: Job<DeliverJob>,
    token: string | undefined,
    destination: Destination,
    items: readonly DeliveryItem[],
    erased: { erased?: number },
    sent: SentRound,
    closesBefore: number,
  ): Promise<void> {
    const data = job.data;
    const base = { destinationId: data.destinationId, jobId: job.id };
    const runsBefore = 'calls' in data ? (data.runs ?? 0) : 0;
    const { run, probe, attempts } = sent;
    await health.disableGoneUrls(data.destinationId, run.calls);

    const urls = activeTargets(destination).map((w) => w.url);
    const now = deps.clock();
    const breaker = deps.gate.breaker(data.destinationId);
    // While the breaker is open, calls this round did not attempt wait on, their windows counting.
    const breakerOpen = breaker.state !== 'closed';
    let calls = run.calls;
    let probeAt: number | undefined;
    if (probe && breakerOpen) {
      // The probe failed: this job carries the next one, whatever its own calls' backoff says, and
      // the probed call is due again with it (the breaker, not its backoff, says when it goes).
      probeAt = (await health.autoDisable(destination, breaker)) ? now : deps.gate.carryNextProbe(data.destinationId);
      calls = calls.map((c) => (c.decision?.kind === 'retry' ? { ...c, decision: retryBy(c.decision, probeAt!) } : c));
    }
    let settled = settleRound(calls, urls, now, undefined, breakerOpen);
    const cap = await retryCapOf(data, settled);
    if (cap) settled = settleRound(calls, urls, now, cap, breakerOpen);
    // After the cap, which settles again: the job that carries the next probe comes back for it.
    if (probeAt !== undefined && settled.pending.length > 0) settled = { ...settled, nextAt: Math.max(settled.nextAt ?? now, probeAt) };
    // What became of each call: for the deletion receipts, and for the replays' progress in the commit.
    const outcomes = { delivered: settled.delivered.map((c) => c.item), deadLettered: settled.dead.map((d) => d.run.item) };
    // Before the commit: a commit that fails runs the job again, which records the same outcomes.
    await recordNoticeOutcomes(deps.receipts, data.destinationId, outcomes);
    const letters = settled.dead.map((d) => letterOf(data, d.run.item, d.state, d.reason));
    if (breaker.state !== 'closed') {
      if (settled.pending.length === 0) deps.gate.releaseCarrier(data.destinationId);
      else health.remember(data.destinationId, job);
    }
    let delayed: DelayedError | undefined;
    try {
      await commit(
        job,
        token,
        letters,
        settled.pending,
        settled.nextAt,
        runsBefore + 1,
        { calls: settled.capped, by: cap?.by },
        outcomes,
        closesBefore,
      );
    } catch (err) {
      if (!(err instanceof DelayedError)) throw err;
      delayed = err;
    }
    const destinationLabel = { destination: data.destinationId };
    if (settled.delivered.length > 0) metrics.messages.inc({ ...destinationLabel, result: 'delivered' }, settled.delivered.length);
    if (settled.retrying.length > 0) metrics.messages.inc({ ...destinationLabel, result: 'retry_scheduled' }, settled.retrying.length);
    if (letters.length > 0) metrics.messages.inc({ ...destinationLabel, result: 'dead_lettered' }, letters.length);
    const lagsMs: number[] = [];
    const deliveredAt = deps.clock();
    for (const c of settled.delivered) {
      const receivedAt = 'receivedAt' in c.item.call ? Date.parse(c.item.call.receivedAt) : NaN;
      if (Number.isNaN(receivedAt)) continue;
      const lagMs = Math.max(0, deliveredAt - receivedAt);
      metrics.endToEndSeconds.observe(lagMs / 1000);
      lagsMs.push(lagMs);
    }
    deps.stats.countDestination(data.destinationId, {
      delivered: settled.delivered.length,
      retrying: settled.retrying.length,
      dead: letters.length,
      ...attempts,
      lagsMs,
    });
    const failures = [
      ...settled.retrying.map((c) => ({
        messageId: c.item.call.messageId,
        outcome: 'retry_scheduled',
        attempt: c.decision?.kind === 'retry' ? c.decision.state.attempt : undefined,
        urls: urlsOf(c),
      })),
      ...settled.dead.map((d) => ({
        messageId: d.run.item.call.messageId,
        outcome: 'dead_lettered',
        attempt: d.state.attempt,
        reason: d.reason,
        urls: urlsOf(d.run),
      })),
    ];
    const line = {
      ...base,
      calls: items.length,
      ...erased,
      delivered: settled.delivered.length,
      retrying: settled.retrying.length,
      deadLettered: letters.length,
      ...(settled.capped > 0 ? { retryCapped: settled.capped } : {}),
      waiting: settled.pending.length - settled.retrying.length,
      ms: run.ms,
      ...(failures.length > 0 ? { failures } : {}),
    };
    if (letters.length > 0) logger.warn(line, 'delivery.attempted');
    else if (logger.isLevelEnabled('info')) logger.info(line, 'delivery.attempted');
    if (delayed) throw delayed;
  }

  /**
   * A job just moved to the delayed set comes back at once when its destination's breaker closed
   * since it started (`closesBefore`): the close woke the jobs parked then, and this one was still
   * running (its calls held back, or being parked), so its calls are due now, not after its park.
   */
  async function backIfBreakerClosed(job: Job<DeliverJob>, closesBefore: number): Promise<void> {
    const breaker = deps.gate.breaker(job.data.destinationId);
    if (breaker.state === 'closed' && breaker.closes !== closesBefore) await job.promote().catch(() => undefined);
  }

  /**
   * The job is parked while the destination's breaker is open (no attempt counted, its calls as
   * they were), to be woken when it closes; never past the first of its calls' window ends, where
   * they get their last attempt. A call that never had an attempt starts its window now: the job
   * then holds it (a commit, within the retry backlog cap) and is moved there. Returns how long to
   * park a job that needed no commit; `settled` when the commit left it nothing to hold.
   * `closesBefore`: the breaker's closes when the job started (see backIfBreakerClosed).
   */
  async function waitForBreaker(
    job: Job<DeliverJob>,
    token: string | undefined,
    destination: Destination,
    items: readonly DeliveryItem[],
    runsBefore: number,
    delayMs: number,
    closesBefore: number,
  ): Promise<number | 'settled'> {
    const data = job.data;
    health.remember(data.destinationId, job);
    const now = deps.clock();
    const windowMs = policyOf(destination, deps.policy).windowMs;
    const parkFor = (calls: readonly DeliveryItem[]) =>
      Math.max(0, Math.min(delayMs, ...calls.map((i) => (i.retry ? i.retry.firstAttemptAt + windowMs - now : delayMs))));
    if (items.every((i) => i.retry !== undefined)) return parkFor(items);
    const urls = activeTargets(destination).map((w) => w.url);
    const runs = items.map((item): CallRun => ({ item, decision: undefined, attempts: [] }));
    const all = settleRound(runs, urls, now, undefined, true);
    const cap = await retryCapOf(data, all);
    const held = cap ? settleRound(runs, urls, now, cap, true) : all;
    const letters = held.dead.map((d) => letterOf(data, d.run.item, d.state, d.reason));
    if (held.pending.length === 0) deps.gate.releaseCarrier(data.destinationId);
    metrics.parked.inc();
    await commit(
      job,
      token,
      letters,
      held.pending,
      now + parkFor(held.pending),
      runsBefore,
      { calls: held.capped, by: cap?.by },
      { deadLettered: held.dead.map((d) => d.run.item) },
      closesBefore,
    );
    return 'settled';
  }
}

/**
 * The job's attempts in the metrics, one increment per label set, not per attempt; returns how
 * many there were, and how many did not succeed, for the stats.
 */
function countAttempts(metrics: DeliveryMetrics, destination: string, calls: readonly CallRun[]): { attempts: number; failed: number } {
  const tally = new LabelTally<'destination' | 'outcome' | 'status_class'>();
  let attempts = 0;
  let failed = 0;
  for (const c of calls) {
    for (const a of c.attempts) {
      metrics.attemptSeconds.observe({ outcome: a.outcome }, a.latencyMs / 1000);
      tally.add({ destination, outcome: a.outcome, status_class: statusClass(a) });
      attempts++;
      if (a.outcome !== 'success') failed++;
    }
  }
  tally.countIn(metrics.attempts);
  return { attempts, failed };
}

// The URLs of a call's attempts, for its log line (origins only, see domain/url-origin.ts).
function urlsOf(c: CallRun) {
  return c.attempts.map((a) => ({ url: originOf(a.url), outcome: a.outcome, status: a.status, error: a.error, ms: a.latencyMs }));
}
