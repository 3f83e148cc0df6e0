/**
 * One run of a delivery job: plan the round (the URLs due for each call), then attempt them, all
 * calls and URLs at once (each request taking one of the destination's places), record each
 * attempt, and decide what becomes of each call. Knows nothing of BullMQ; deliver.ts turns the
 * decisions into queue operations.
 */
import {
  batchBody,
  batchDeliveryId,
  batchGroups,
  buildHeaders,
  callBody,
  filtersOf,
  type CallBody,
  type DeliveryAttempt,
  type DeliveryItem,
  type Destination,
  type WebhookTarget,
} from '@eventrelay/config';
import { answerSignal } from '../domain/answer-signal.js';
import { classify, type Outcome } from '../domain/outcome.js';
import { attemptDetail, keepsDetail, type DetailLevel } from '../domain/attempt-detail.js';
import { decideRound, dueUrls, type RetryPolicy, type UrlResult } from '../domain/schedule.js';
import type { CallRun } from '../domain/settle.js';
import { inSlices } from '@eventrelay/runtime';
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

/** A call of a round: the URLs due for it, decided once at the round's `now`. */
interface RoundCall {
  readonly item: DeliveryItem;
  readonly due: readonly WebhookTarget[];
}

/** What a round attempts: for each call of the job, the URLs due for it. */
export interface Round {
  readonly calls: readonly RoundCall[];
  /** Requests the round makes (POSTs: with batching, one carries several calls): what the job reserves at the gate. */
  readonly requests: number;
  readonly destination: Destination;
  /** Each call's body, rendered once per round when first needed (request counts with batching, or the send). */
  readonly bodyOf: (item: DeliveryItem) => CallBody;
}

/** One POST of a round: a URL and the calls its body carries (one, or with batching several). */
interface RoundRequest {
  readonly target: WebhookTarget;
  readonly calls: readonly RoundCall[];
  /** The body is a JSON array of the calls' bodies. */
  readonly batched: boolean;
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

/**
 * `bodies`: the calls' bodies when they were built ahead (renderBodies, which yields to the event
 * loop between calls); any other body is built when first needed. A call whose body cannot be
 * built (its mapping's output is too large) is due nowhere: runDelivery makes it a dead letter.
 */
export function planRound(
  items: readonly DeliveryItem[],
  destination: Destination,
  now: number,
  bodies: Map<DeliveryItem, CallBody> = new Map(),
): Round {
  const bodyOf = (item: DeliveryItem): CallBody => {
    let body = bodies.get(item);
    if (!body) bodies.set(item, (body = callBody(item.call, destination)));
    return body;
  };
  const targets = activeTargets(destination);
  const urls = targets.map((w) => w.url);
  // Only a mapping can fail to build a body.
  const mapped = destination.settings.mapping !== undefined;
  const calls = items.map((item) => {
    if (mapped && !bodyOf(item).ok) return { item, due: [] };
    const dueNow = dueUrls(urls, item.retry, now);
    const due = dueNow.length === urls.length ? targets : targets.filter((w) => dueNow.includes(w.url));
    return { item, due };
  });
  return withRequests({ calls, requests: 0, destination, bodyOf });
}

/**
 * The bodies of a job's calls, built ahead with a pause for the event loop every few
 * milliseconds: a destination's rules and mapping are bounded per call (docs/filters.md), and this
 * bounds a job of many calls too. Only worth it when rules or a mapping shape the body.
 */
export async function renderBodies(items: readonly DeliveryItem[], destination: Destination): Promise<Map<DeliveryItem, CallBody>> {
  const bodies = new Map<DeliveryItem, CallBody>();
  if (destination.settings.mapping === undefined && !filtersOf(destination).shapes) return bodies;
  await inSlices(items, (item) => void bodies.set(item, callBody(item.call, destination)));
  return bodies;
}

function withRequests(round: Round): Round {
  return { ...round, requests: roundRequests(round).length };
}

/**
 * The round's POSTs. Without batching, one per call and URL due. With it, per URL, the calls due
 * there grouped in order (batchGroups); a delete notice goes alone, as its own body with its own
 * headers (docs/spec.md §6 is a contract with the receiver, batching or not).
 */
function roundRequests(round: Round): RoundRequest[] {
  const batching = round.destination.settings.batching;
  const requests: RoundRequest[] = [];
  const alone = (call: RoundCall) => batching === undefined || call.item.call.type === 'delete';
  for (const call of round.calls) {
    if (alone(call)) for (const target of call.due) requests.push({ target, calls: [call], batched: false });
  }
  if (batching === undefined) return requests;
  for (const target of activeTargets(round.destination)) {
    const group = round.calls.filter((c) => !alone(c) && c.due.includes(target));
    if (group.length === 0) continue;
    const bodies = group.map((c) => (round.bodyOf(c.item) as { body: string }).body);
    for (const positions of batchGroups(bodies, batching)) requests.push({ target, calls: positions.map((i) => group[i]!), batched: true });
  }
  return requests;
}

/**
 * The calls at or past their window's end, each with the URLs due: their last attempt, which goes
 * even while the destination's breaker is open. The other calls wait, as they are.
 */
export function lastRound(round: Round, windowMs: number, now: number): Round {
  const calls = round.calls.map(({ item, due }) => {
    const ended = item.retry !== undefined && now >= item.retry.firstAttemptAt + windowMs;
    return { item, due: ended ? due : [] };
  });
  return withRequests({ ...round, calls });
}

/**
 * The breaker's probe: one request, to the first URL due of the first call that has one; every
 * other call of the round waits, as it is. Calls at their window's end are the exception: they get
 * their last attempt (as in `lastRound`), the first of them being the probe, else the job that
 * carries the probe would hold them past their window for as long as the breaker stays open.
 */
export function probeRound(round: Round, windowMs: number, now: number): Round {
  const last = lastRound(round, windowMs, now);
  if (last.requests > 0) return last;
  let taken = false;
  const calls = round.calls.map(({ item, due }) => {
    if (taken || due.length === 0) return { item, due: [] };
    taken = true;
    return { item, due: due.slice(0, 1) };
  });
  return { ...round, calls, requests: taken ? 1 : 0 };
}

export interface RunResult {
  readonly calls: readonly CallRun[];
  readonly ms: number;
}

/** What the round's requests did for one call. */
interface CallTally {
  readonly results: UrlResult[];
  readonly attempts: DeliveryAttempt[];
  holdMs?: number;
}

/**
 * Runs `round` against `destination`, the job's destination as configured now, and enabled.
 * `stopping()` true: calls not started yet are left as they are (not attempted, no attempt
 * counted), for a shutdown. A call whose body cannot be built (its mapping's output is too large)
 * is dead at once: no attempt could ever send it.
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
  const tallies = new Map<DeliveryItem, CallTally>();
  const tallyOf = (item: DeliveryItem): CallTally => {
    let tally = tallies.get(item);
    if (!tally) tallies.set(item, (tally = { results: [], attempts: [] }));
    return tally;
  };
  const send = async (request: RoundRequest): Promise<void> => {
    const { target, calls } = request;
    const hold = await places.take();
    if (hold !== undefined || stopping()) {
      places.give(undefined, hold === undefined);
      if (hold !== undefined) for (const c of calls) tallyOf(c.item).holdMs = Math.max(tallyOf(c.item).holdMs ?? 0, hold);
      return;
    }
    const bodies = calls.map((c) => (round.bodyOf(c.item) as { body: string }).body);
    const body = request.batched ? batchBody(bodies) : bodies[0]!;
    // Read before the headers: webhook-timestamp and the rotation overlap are this attempt's time.
    const began = deps.clock();
    const headers = postHeaders(destinationId, destination, request, body, began);
    const sent = await deps.sender.send(target.url, headers, body, timeoutMs);
    const ended = deps.clock();
    const outcome = classify(sent, ended);
    places.give(ended - began, true, { signal: answerSignal(outcome) });
    // Built after the request: the attempt log's detail never delays a send.
    const keepDetail = keepsDetail(deps.detail ?? 'all', outcome.kind);
    for (const { item } of calls) {
      const record = attemptRecord(destinationId, item, target.url, attemptOf(item), outcome, ended - began, began);
      if (keepDetail) Object.assign(record, attemptDetail(item.call, headers, target.headers, body, sent));
      const tally = tallyOf(item);
      tally.attempts.push(record);
      tally.results.push({ url: target.url, outcome });
      deps.record(record);
    }
  };
  await Promise.all(roundRequests(round).map(send));
  const mapped = destination.settings.mapping !== undefined;
  const calls = round.calls.map(({ item }): CallRun => {
    const rendered = mapped ? round.bodyOf(item) : undefined;
    if (rendered?.ok === false)
      return {
        item,
        decision: { kind: 'dead', reason: rendered.error, state: item.retry ?? { firstAttemptAt: startedAt, attempt: 0, urls: {} } },
        attempts: [],
      };
    const tally = tallies.get(item);
    // Stopped, or held back, before any URL of this call was tried: it is as it was.
    if (!tally || tally.results.length === 0)
      return {
        item,
        decision: undefined,
        attempts: tally?.attempts ?? [],
        ...(tally?.holdMs !== undefined ? { holdMs: tally.holdMs } : {}),
      };
    const decision = decideRound({ urls, state: item.retry, results: tally.results, startedAt, now: deps.clock(), policy, random });
    return { item, decision, attempts: tally.attempts };
  });
  return { calls, ms: deps.clock() - startedAt };
}

const attemptOf = (item: DeliveryItem) => (item.retry?.attempt ?? 0) + 1;

/**
 * The headers of one POST. A batched POST is named by its calls (batchDeliveryId), says how many
 * it carries, and counts as the highest attempt among them.
 */
function postHeaders(
  destinationId: string,
  destination: Destination,
  request: RoundRequest,
  body: string,
  now: number,
): Record<string, string> {
  const { settings } = destination;
  const items = request.calls.map((c) => c.item);
  const { batched } = request;
  const first = items[0]!;
  return buildHeaders({
    body,
    messageId: batched
      ? batchDeliveryId(
          destinationId,
          items.map((item) => ({ sourceId: item.sourceId, messageId: item.call.messageId })),
        )
      : first.call.messageId,
    ...(batched ? { batchSize: items.length } : {}),
    attempt: Math.max(...items.map(attemptOf)),
    sharedSecret: settings.sharedSecret,
    staticHeaders: request.target.headers,
    signing: {
      destinationId,
      sourceId: first.sourceId,
      now,
      previousSecret: settings.previousSecret,
      standardWebhooks: settings.standardWebhooks,
    },
  });
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
