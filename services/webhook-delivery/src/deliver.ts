/**
 * One run of a delivery job: attempt every URL that is due, at once, record each attempt, and
 * decide what becomes of the message. Knows nothing of BullMQ; worker.ts turns the decision into
 * queue operations.
 */
import type { DeliverJob, DeliveryAttempt, Destination } from '@eventrelay/config';
import { buildBody } from './domain/body.js';
import { buildHeaders } from './domain/headers.js';
import { classify, type Outcome } from './domain/outcome.js';
import { decideRound, dueUrls, type Decision, type RetryPolicy, type UrlResult } from './domain/schedule.js';
import type { Sender } from './adapters/http-sender.js';

export interface DeliverDeps {
  readonly sender: Pick<Sender, 'send'>;
  readonly record: (attempt: DeliveryAttempt) => void;
  readonly policy: RetryPolicy;
  readonly clock: () => number;
  readonly random: () => number;
}

export interface RunResult {
  readonly decision: Decision;
  readonly attempts: readonly DeliveryAttempt[];
  readonly ms: number;
}

/** `destination` is the job's destination as configured now, and enabled. */
export async function runDelivery(job: DeliverJob, destination: Destination, deps: DeliverDeps): Promise<RunResult> {
  const { settings } = destination;
  const urls = settings.webhooks.map((w) => w.url);
  const startedAt = deps.clock();
  const due = dueUrls(urls, job.retry, startedAt);
  const attempt = (job.retry?.attempt ?? 0) + 1;
  const body = buildBody(job.call);
  const attempts: DeliveryAttempt[] = [];
  const results: UrlResult[] = await Promise.all(
    settings.webhooks
      .filter((w) => due.includes(w.url))
      .map(async (target): Promise<UrlResult> => {
        const headers = buildHeaders({ body, messageId: job.call.messageId, attempt, sharedSecret: settings.sharedSecret, staticHeaders: target.headers });
        const began = deps.clock();
        const sent = await deps.sender.send(target.url, headers, body);
        const ended = deps.clock();
        const outcome = classify(sent, ended);
        const record = attemptRecord(job, target.url, attempt, outcome, ended - began, began);
        attempts.push(record);
        deps.record(record);
        return { url: target.url, outcome };
      }),
  );
  const now = deps.clock();
  const decision = decideRound({ urls, state: job.retry, results, startedAt, now, policy: deps.policy, random: deps.random });
  return { decision, attempts, ms: now - startedAt };
}

function attemptRecord(job: DeliverJob, url: string, attempt: number, outcome: Outcome, latencyMs: number, at: number): DeliveryAttempt {
  return {
    destinationId: job.destinationId,
    sourceId: job.sourceId,
    messageId: job.call.messageId,
    url,
    attempt,
    outcome: outcome.kind,
    ...(outcome.status !== undefined ? { status: outcome.status } : {}),
    ...(outcome.kind !== 'success' ? { error: outcome.error } : {}),
    latencyMs,
    at: new Date(at).toISOString(),
  };
}
