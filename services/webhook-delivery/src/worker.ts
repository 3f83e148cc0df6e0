/**
 * The deliver worker's processor: the BullMQ edge. It turns a run's decision into queue
 * operations (complete, move to delayed with the new retry state, dead-letter) and writes the one
 * log line per run. At-least-once: until one of those operations lands, the job stays active and
 * locked to this process; if the process dies, the lock lapses and another worker runs it again.
 */
import { DelayedError, type Job } from 'bullmq';
import type { DeadLetter, DeliverJob, Destination } from '@eventrelay/config';
import type { Logger } from '@eventrelay/runtime';
import { runDelivery, type DeliverDeps } from './deliver.js';
import type { DestinationGate } from './destination-gate.js';
import type { DeliveryMetrics } from './metrics.js';

export interface WorkerDeps extends DeliverDeps {
  readonly destinations: { get(id: string): Destination | undefined };
  readonly gate: DestinationGate;
  readonly deadLetters: { add(letter: DeadLetter): Promise<number> };
  readonly metrics: DeliveryMetrics;
  readonly logger: Logger;
}

export type JobResult = 'delivered' | 'dead_lettered' | 'dropped';

export function createDeliverProcessor(deps: WorkerDeps): (job: Job<DeliverJob>, token?: string) => Promise<JobResult> {
  const { metrics, logger } = deps;
  return async (job, token) => {
    const data = job.data;
    const destination = deps.destinations.get(data.destinationId);
    const verdict = destination?.enabled ? await deps.gate.enter(data.destinationId) : ({ kind: 'go' } as const);
    if (verdict.kind === 'park') {
      metrics.parked.inc();
      await job.moveToDelayed(deps.clock() + verdict.delayMs, token);
      throw new DelayedError();
    }
    const entered = destination?.enabled === true;
    metrics.inFlight.inc();
    let run: Awaited<ReturnType<typeof runDelivery>> | undefined;
    try {
      run = await runDelivery(data, destination, deps);
    } finally {
      metrics.inFlight.dec();
      if (entered) deps.gate.leave(data.destinationId, run?.kind === 'decided' ? run.ms : 0);
    }
    const base = { messageId: data.call.messageId, sourceId: data.sourceId, destinationId: data.destinationId, jobId: job.id };
    if (run.kind === 'dropped') {
      metrics.messages.inc({ result: 'dropped' });
      logger.warn({ ...base, outcome: 'dropped', reason: run.reason }, 'delivery.attempted');
      return 'dropped';
    }
    for (const a of run.attempts) {
      metrics.attempts.inc({ destination: data.destinationId, outcome: a.outcome });
      metrics.attemptSeconds.observe({ outcome: a.outcome }, a.latencyMs / 1000);
    }
    const { decision } = run;
    const urls = () => run.attempts.map((a) => ({ url: a.url, outcome: a.outcome, status: a.status, error: a.error, ms: a.latencyMs }));
    switch (decision.kind) {
      case 'delivered': {
        metrics.messages.inc({ result: 'delivered' });
        const receivedAt = 'receivedAt' in data.call ? Date.parse(data.call.receivedAt) : NaN;
        if (!Number.isNaN(receivedAt)) metrics.endToEndSeconds.observe(Math.max(0, deps.clock() - receivedAt) / 1000);
        if (logger.isLevelEnabled('info')) logger.info({ ...base, attempt: decision.attempt, outcome: 'delivered', urls: urls(), ms: run.ms }, 'delivery.attempted');
        return 'delivered';
      }
      case 'retry': {
        await job.updateData({ ...data, retry: decision.state });
        await job.moveToDelayed(decision.at, token);
        metrics.messages.inc({ result: 'retry_scheduled' });
        logger.info({ ...base, attempt: decision.state.attempt, outcome: 'retry_scheduled', retryAt: new Date(decision.at).toISOString(), urls: urls(), ms: run.ms }, 'delivery.attempted');
        throw new DelayedError();
      }
      case 'dead': {
        const { state } = decision;
        const { retry: _dropped, ...replayable } = data;
        const evicted = await deps.deadLetters.add({
          jobId: String(job.id),
          job: replayable,
          attempts: state.attempt,
          lastError: decision.reason,
          urls: Object.entries(state.urls).map(([url, s]) => ({ url, error: s.lastError })),
          firstAttemptAt: new Date(state.firstAttemptAt).toISOString(),
          deadAt: new Date(deps.clock()).toISOString(),
        });
        if (evicted > 0) metrics.deadLettersEvicted.inc(evicted);
        metrics.messages.inc({ result: 'dead_lettered' });
        logger.warn({ ...base, attempt: state.attempt, outcome: 'dead_lettered', reason: decision.reason, urls: urls(), ms: run.ms }, 'delivery.attempted');
        return 'dead_lettered';
      }
    }
  };
}
