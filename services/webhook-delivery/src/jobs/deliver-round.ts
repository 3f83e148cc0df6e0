/**
 * One run of a delivery job: plan the round (the URLs due for each call), then attempt them, all
 * calls and URLs at once (each request taking one of the destination's places), record each
 * attempt, and decide what becomes of each call. Knows nothing of BullMQ; deliver.ts turns the
 * decisions into queue operations.
 */
import type { DeliveryAttempt, DeliveryItem, Destination, WebhookTarget } from '@eventrelay/config';
import { buildBody } from '../domain/body.js';
import { buildHeaders } from '../domain/headers.js';
import { answerSignal } from '../domain/answer-signal.js';
import { classify, type Outcome } from '../domain/outcome.js';
import { attemptDetail, keepsDetail, type DetailLevel } from '../domain/attempt-detail.js';
import { decideRound, dueUrls, type RetryPolicy, type UrlResult } from '../domain/schedule.js';
import type { CallRun } from '../domain/settle.js';
import type { Sender } from '../adapters/http-sender.js';
import type { RequestPlaces } from '../destination-gate.js';

export interface DeliverDeps {
  readonly sender: Pick<Sender, 'send'>;
  readonly record: (attempt: DeliveryAttempt) => void;
  /** The defaults; a destination's own `retryWindowMs` replaces the window (policyOf). */
  readonly policy: RetryPolicy;
  /** DELIVERY_TIMEOUT_MS: an attempt's limit unless the destination sets `timeoutMs`. */
  readonly timeoutMs: number;
  readonly clock: () => number;
  readonly random: () => number;
  /** DELIVERY_LOG_DETAIL (default all). */
  readonly detail?: DetailLevel;
}

/** What a round attempts: for each call of the job, the URLs due for it, decided once at `now`. */
export interface Round {
  readonly calls: readonly { readonly item: DeliveryItem; readonly due: readonly WebhookTarget[] }[];
  /** Requests the round makes: what the job reserves at the gate. */
  readonly requests: number;
}

/**
 * The destination's URLs that calls go to: those not disabled (by a 410 Gone or an operator). A
 * disabled URL is as if removed: calls retrying forget it, and a call with no URL left is dead.
 */
export function activeTargets(destination: Destination): readonly WebhookTarget[] {
  const all = destination.settings.webhooks;
  return all.some((w) => w.disabled) ? all.filter((w) => !w.disabled) : all;
}

/** The retry policy for a destination: the defaults, with its own window when it sets one. */
export function policyOf(destination: Destination, defaults: RetryPolicy): RetryPolicy {
  const windowMs = destination.settings.retryWindowMs;
  return windowMs === undefined ? defaults : { ...defaults, windowMs };
}

export function planRound(items: readonly DeliveryItem[], destination: Destination, now: number): Round {
  const targets = activeTargets(destination);
  const urls = targets.map((w) => w.url);
  let requests = 0;
  const calls = items.map((item) => {
    const dueNow = dueUrls(urls, item.retry, now);
    const due = dueNow.length === urls.length ? targets : targets.filter((w) => dueNow.includes(w.url));
    requests += due.length;
    return { item, due };
  });
  return { calls, requests };
}

/**
 * The calls at or past their window's end, each with the URLs due: their last attempt, which goes
 * even while the destination's breaker is open. The other calls wait, as they are.
 */
export function lastRound(round: Round, windowMs: number, now: number): Round {
  let requests = 0;
  const calls = round.calls.map(({ item, due }) => {
    const ended = item.retry !== undefined && now >= item.retry.firstAttemptAt + windowMs;
    if (!ended) return { item, due: [] };
    requests += due.length;
    return { item, due };
  });
  return { calls, requests };
}

/**
 * The breaker's probe: one request, to the first URL due of the first call that has one; every
 * other call of the round waits, as it is.
 */
export function probeRound(round: Round): Round {
  let taken = false;
  const calls = round.calls.map(({ item, due }) => {
    if (taken || due.length === 0) return { item, due: [] };
    taken = true;
    return { item, due: due.slice(0, 1) };
  });
  return { calls, requests: taken ? 1 : 0 };
}

export interface RunResult {
  readonly calls: readonly CallRun[];
  readonly ms: number;
}

/**
 * Runs `round` against `destination`, the job's destination as configured now, and enabled.
 * `stopping()` true: calls not started yet are left as they are (not attempted, no attempt
 * counted), for a shutdown.
 */
export async function runDelivery(
  destinationId: string,
  round: Round,
  destination: Destination,
  deps: DeliverDeps,
  places: RequestPlaces,
  stopping: () => boolean = () => false,
): Promise<RunResult> {
  const urls = activeTargets(destination).map((w) => w.url);
  const policy = policyOf(destination, deps.policy);
  const timeoutMs = destination.settings.timeoutMs ?? deps.timeoutMs;
  const startedAt = deps.clock();
  // One backoff draw for the job's round: its calls failed together, so they are retried
  // together (one job run); jobs still draw apart from each other, which is what spreads a
  // receiver's backlog out when it recovers.
  const draw = deps.random();
  const random = () => draw;
  const calls = await Promise.all(
    round.calls.map(async ({ item, due }): Promise<CallRun> => {
      if (due.length === 0 || stopping()) return { item, decision: undefined, attempts: [] };
      const attempt = (item.retry?.attempt ?? 0) + 1;
      const body = buildBody(item.call);
      const attempts: DeliveryAttempt[] = [];
      let holdMs: number | undefined;
      const results: UrlResult[] = await Promise.all(
        due.map(async (target): Promise<UrlResult | undefined> => {
          const hold = await places.take();
          if (hold !== undefined || stopping()) {
            places.give(undefined, hold === undefined);
            if (hold !== undefined) holdMs = Math.max(holdMs ?? 0, hold);
            return undefined;
          }
          // Read before the headers: webhook-timestamp and the rotation overlap are this attempt's time.
          const began = deps.clock();
          const headers = buildHeaders({
            body,
            messageId: item.call.messageId,
            attempt,
            sharedSecret: destination.settings.sharedSecret,
            staticHeaders: target.headers,
            signing: {
              destinationId,
              sourceId: item.sourceId,
              now: began,
              previousSecret: destination.settings.previousSecret,
              standardWebhooks: destination.settings.standardWebhooks,
            },
          });
          const sent = await deps.sender.send(target.url, headers, body, timeoutMs);
          const ended = deps.clock();
          const outcome = classify(sent, ended);
          places.give(ended - began, true, { signal: answerSignal(outcome), status: outcome.status });
          const record = attemptRecord(destinationId, item, target.url, attempt, outcome, ended - began, began);
          // Built after the request: the attempt log's detail never delays a send.
          if (keepsDetail(deps.detail ?? 'all', outcome.kind))
            Object.assign(record, attemptDetail(item.call, headers, target.headers, body, sent));
          attempts.push(record);
          deps.record(record);
          return { url: target.url, outcome };
        }),
      ).then((r) => r.filter((x): x is UrlResult => x !== undefined));
      // Stopped, or held back, before any URL of this call was tried: it is as it was.
      if (results.length === 0) return { item, decision: undefined, attempts, ...(holdMs !== undefined ? { holdMs } : {}) };
      const decision = decideRound({ urls, state: item.retry, results, startedAt, now: deps.clock(), policy, random });
      return { item, decision, attempts };
    }),
  );
  return { calls, ms: deps.clock() - startedAt };
}

function attemptRecord(
  destinationId: string,
  item: DeliveryItem,
  url: string,
  attempt: number,
  outcome: Outcome,
  latencyMs: number,
  at: number,
): DeliveryAttempt {
  return {
    destinationId,
    sourceId: item.sourceId,
    messageId: item.call.messageId,
    url,
    attempt,
    outcome: outcome.kind,
    ...(outcome.status !== undefined ? { status: outcome.status } : {}),
    ...(outcome.kind !== 'success' ? { error: outcome.error } : {}),
    latencyMs,
    at: new Date(at).toISOString(),
  };
}
