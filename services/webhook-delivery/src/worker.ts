/**
 * The deliver worker's processor: the BullMQ edge. It turns a run's decision into queue
 * operations (complete, move to delayed with the new retry state, dead-letter) and writes the one
 * log line per run. At-least-once: until one of those operations lands, the job stays active and
 * locked to this process; if the process dies, the lock lapses and another worker runs it again.
 */
import { DelayedError, type Job } from 'bullmq';
import type { DeadLetter, DeliverJob, Destination, RetryState } from '@eventrelay/config';
import type { Logger } from '@eventrelay/runtime';
import { runDelivery, type DeliverDeps, type RunResult } from './deliver.js';
import type { DestinationGate } from './destination-gate.js';
import { statusClass } from './domain/outcome.js';
import type { DeliveryMetrics } from './metrics.js';

export interface WorkerDeps extends DeliverDeps {
  readonly destinations: { get(id: string): Destination | undefined; refresh(): Promise<void> };
  readonly gate: DestinationGate;
  readonly deadLetters: { add(letter: DeadLetter): Promise<number> };
  readonly metrics: DeliveryMetrics;
  readonly logger: Logger;
  /** Moves the active job back to delayed until `at` (runtime putJobBack). */
  readonly putBack: (job: Job, at: number, token: string | undefined) => Promise<void>;
}

export type JobResult = 'delivered' | 'dead_lettered' | 'dropped';

export function createDeliverProcessor(deps: WorkerDeps): (job: Job<DeliverJob>, token?: string) => Promise<JobResult> {
  const { metrics, logger } = deps;

  /** The job's destination, reloading the config first when it is unknown or disabled here. */
  async function reloadedDestination(id: string): Promise<Destination | undefined> {
    // Router and webhook-delivery reload config on their own clocks: a destination created or
    // enabled a moment ago may be known to the router first. Never judge on a stale view.
    await deps.destinations.refresh();
    return deps.destinations.get(id);
  }

  /** Kept for inspection and replay; written idempotently by job id. */
  async function deadLetter(job: Job<DeliverJob>, state: RetryState, reason: string): Promise<void> {
    // The final state marks every URL failed, so a run after a crash between here and the job's
    // completion writes the same letter again instead of attempting after the window.
    const urls = Object.fromEntries(Object.entries(state.urls).map(([url, s]) => [url, { ...s, failed: true }]));
    const { retry: _dropped, ...replayable } = job.data;
    await job.updateData({ ...replayable, retry: { ...state, urls } });
    const evicted = await deps.deadLetters.add({
      jobId: String(job.id),
      job: replayable,
      attempts: state.attempt,
      lastError: reason,
      urls: Object.entries(state.urls).map(([url, s]) => ({ url, error: s.lastError })),
      firstAttemptAt: new Date(state.firstAttemptAt).toISOString(),
      deadAt: new Date(deps.clock()).toISOString(),
    });
    if (evicted > 0) metrics.deadLettersEvicted.inc(evicted);
    metrics.messages.inc({ destination: job.data.destinationId, result: 'dead_lettered' });
  }

  return async (job, token) => {
    const data = job.data;
    const base = { messageId: data.call.messageId, sourceId: data.sourceId, destinationId: data.destinationId, jobId: job.id };
    const known = deps.destinations.get(data.destinationId);
    const destination = known?.enabled ? known : await reloadedDestination(data.destinationId);
    if (!destination) {
      // Deleted: there is nowhere to deliver to, nor anyone to replay for.
      metrics.messages.inc({ destination: data.destinationId, result: 'dropped' });
      logger.warn({ ...base, outcome: 'dropped', reason: 'destination no longer exists' }, 'delivery.attempted');
      return 'dropped';
    }
    if (!destination.enabled) {
      // Disabled: kept as a dead letter, so the operator can replay once it is enabled again.
      const reason = 'destination is disabled';
      await deadLetter(job, data.retry ?? { firstAttemptAt: deps.clock(), attempt: 0, urls: {} }, reason);
      logger.warn({ ...base, outcome: 'dead_lettered', reason }, 'delivery.attempted');
      return 'dead_lettered';
    }

    // Every fetch of the job counts in attemptsStarted: those beyond its rounds were parks.
    const parks = job.attemptsStarted - 1 - (data.retry?.attempt ?? 0);
    const verdict = await deps.gate.enter(data.destinationId, parks);
    if (verdict.kind === 'park') {
      metrics.parked.inc();
      await deps.putBack(job, deps.clock() + verdict.delayMs, token);
      throw new DelayedError();
    }
    metrics.inFlight.inc({ destination: data.destinationId });
    let run: RunResult | undefined;
    try {
      run = await runDelivery(data, destination, deps);
    } finally {
      metrics.inFlight.dec({ destination: data.destinationId });
      deps.gate.leave(data.destinationId, run?.ms ?? 0);
    }
    for (const a of run.attempts) {
      metrics.attempts.inc({ destination: data.destinationId, outcome: a.outcome, status_class: statusClass(a) });
      metrics.attemptSeconds.observe({ outcome: a.outcome }, a.latencyMs / 1000);
    }
    const { decision } = run;
    // Receiver URLs often carry credentials in their path or query: logs get the origin only
    // (the attempt log, behind the admin API, keeps the full URL).
    const urls = () => run.attempts.map((a) => ({ url: originOf(a.url), outcome: a.outcome, status: a.status, error: a.error, ms: a.latencyMs }));
    switch (decision.kind) {
      case 'delivered': {
        metrics.messages.inc({ destination: data.destinationId, result: 'delivered' });
        const receivedAt = 'receivedAt' in data.call ? Date.parse(data.call.receivedAt) : NaN;
        if (!Number.isNaN(receivedAt)) metrics.endToEndSeconds.observe(Math.max(0, deps.clock() - receivedAt) / 1000);
        if (logger.isLevelEnabled('info')) logger.info({ ...base, attempt: decision.attempt, outcome: 'delivered', urls: urls(), ms: run.ms }, 'delivery.attempted');
        return 'delivered';
      }
      case 'retry': {
        await job.updateData({ ...data, retry: decision.state });
        await deps.putBack(job, decision.at, token);
        metrics.messages.inc({ destination: data.destinationId, result: 'retry_scheduled' });
        logger.info({ ...base, attempt: decision.state.attempt, outcome: 'retry_scheduled', retryAt: new Date(decision.at).toISOString(), urls: urls(), ms: run.ms }, 'delivery.attempted');
        throw new DelayedError();
      }
      case 'dead': {
        await deadLetter(job, decision.state, decision.reason);
        logger.warn({ ...base, attempt: decision.state.attempt, outcome: 'dead_lettered', reason: decision.reason, urls: urls(), ms: run.ms }, 'delivery.attempted');
        return 'dead_lettered';
      }
    }
  };
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}
