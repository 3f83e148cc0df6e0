/**
 * The intake endpoint: a thin translator from HTTP to the domain and the writer. Order matters:
 * the body must parse before a body write key can be found, the source must be known before its
 * calls are looked at, and 200 is sent only after the writer has the calls durably in Redis.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AuthError, EventrelayError, UnavailableError, type DebugEvent, type NormalizedCall, type Source } from '@eventrelay/config';
import { LabelTally, type Logger } from '@eventrelay/runtime';
import type { StatsCounters } from '@eventrelay/stores';
import { isCallType, type IntakeRoute } from '../domain/routes.js';
import type { Rejection } from '../domain/interpret.js';
import { basicUser, extractWriteKey } from '../domain/auth.js';
import { inspectJsonText, itemsNeedMeasuring, parseJsonObject } from '../domain/json-text.js';
import { interpretBody } from '../domain/interpret.js';
import { MAX_BATCH_BYTES, MAX_CALL_BYTES } from '../domain/limits.js';
import { budgetBytesOf, ratePerSecondOf, type SourceDefaults } from '../domain/source-budget.js';
import { storedBytesOf } from '../domain/memory-guard.js';
import { readBodyText } from '../adapters/body-reader.js';
import type { SourceDirectory } from '../adapters/source-directory.js';
import type { IntakeWriter, Refusal } from '../adapters/intake-writer.js';
import type { QueueDepthGuard } from '../adapters/queue-depth-guard.js';
import type { RedisMemoryGuard } from '../adapters/redis-memory-guard.js';
import type { ReplicaGuard } from '../adapters/replica-guard.js';
import type { IngestMetrics } from '../metrics.js';
import { sendError, sendJson } from './respond.js';
import { applyCors } from './cors.js';
import { holdMsFor, type RefusalHold } from './refusal-hold.js';

export interface IntakeDeps {
  readonly directory: Pick<SourceDirectory, 'lookup'>;
  readonly writer: Pick<IntakeWriter, 'submit' | 'refusal'>;
  readonly depthGuard: Pick<QueueDepthGuard, 'overLimit'>;
  readonly memoryGuard: Pick<RedisMemoryGuard, 'overLimit' | 'maxmemory' | 'noteStored'>;
  /** Durable mode only: fewer replicas online than it needs. */
  readonly replicaGuard?: Pick<ReplicaGuard, 'short' | 'required'>;
  /** Each source type's default rate and share of Redis (domain/source-budget.ts). */
  readonly sourceDefaults: SourceDefaults;
  readonly clock: () => number;
  readonly newId: () => string;
  readonly logger: Logger;
  readonly metrics: IngestMetrics;
  /** The event debugger: what each source sent, accepted or rejected (see SourceEvents). */
  readonly debugEvents?: { record(sourceId: string, event: DebugEvent): void };
  /** The per-minute counts behind the admin stats; batched, so counting costs no Redis command here. */
  readonly stats: Pick<StatsCounters, 'countSource'>;
  /** Holds the answers of requests refused over their source's limit or budget (http/refusal-hold.ts). */
  readonly refusals?: { readonly hold: Pick<RefusalHold, 'hold'>; readonly maxMs: number };
}

/** What the intake reads of a source to price its calls. */
type PricedSource = Pick<Source, 'id' | 'type' | 'rateLimitPerSecond' | 'memoryShare'>;

interface Outcome {
  status: number;
  code?: string;
  sourceId?: string;
  accepted: number;
  duplicates: number;
  rejected: number;
  /** Valid calls refused with their request (memory, queue depth, rate limit, Redis); not logged. */
  refused: number;
  /** For the metrics: calls by type, outcome and (for a rejection) reason. */
  readonly calls: LabelTally<'type' | 'outcome' | 'reason'>;
}

export function createIntakeHandler(deps: IntakeDeps) {
  /** `segment` is the path after /v1/ as sent, for the log line. */
  return async function intake(req: IncomingMessage, res: ServerResponse, route: IntakeRoute, segment: string): Promise<void> {
    const started = performance.now();
    const outcome: Outcome = { status: 200, accepted: 0, duplicates: 0, rejected: 0, refused: 0, calls: new LabelTally() };
    applyCors(req, res);
    try {
      const rejected = await accept(route, req, outcome);
      sendJson(res, 200, rejected.length > 0 ? { success: true, rejected } : { success: true });
    } catch (err) {
      if (deps.refusals) await deps.refusals.hold.hold(holdMsFor(err, deps.clock(), deps.refusals.maxMs));
      const answered = sendError(res, err);
      outcome.status = answered.status;
      outcome.code = answered.code;
      // A single call refused as a whole is one rejected call; a refused batch was never read as calls.
      if (route.kind === 'single') {
        outcome.calls.clear();
        outcome.calls.add({ type: route.type, outcome: 'rejected', reason: answered.code });
      }
      if (answered.status >= 500 && !(err instanceof UnavailableError)) deps.logger.error({ err }, 'intake.defect');
    } finally {
      const name = route.kind === 'single' ? route.type : 'batch';
      deps.metrics.requests.inc({ route: name, status_class: `${Math.floor(outcome.status / 100)}xx`, code: outcome.code ?? 'ok' });
      deps.metrics.duration.observe({ route: name }, (performance.now() - started) / 1000);
      outcome.calls.countIn(deps.metrics.calls);
      if (outcome.sourceId !== undefined) deps.stats.countSource(outcome.sourceId, sourceTally(route, outcome));
      const { calls: _tally, refused: _refused, ...logged } = outcome;
      deps.logger.info({ route: segment, ...logged, ms: Math.round((performance.now() - started) * 100) / 100 }, 'intake.request');
    }
  };

  async function accept(route: IntakeRoute, req: IncomingMessage, outcome: Outcome) {
    const receivedAt = deps.clock();
    const named = await refuseEarly(req, outcome);
    const text = await readBodyText(req, route.kind === 'single' ? MAX_CALL_BYTES : MAX_BATCH_BYTES);
    const shape = inspectJsonText(text);
    const body = parseJsonObject(text, shape);
    const writeKey = extractWriteKey(req.headers.authorization, body);
    if (!writeKey)
      throw new AuthError('missing_write_key', 'no write key: send it as the HTTP Basic user name or as "writeKey" in the body');
    // The header's key wins over the body's (extractWriteKey): a source it named is this one.
    const source =
      named ??
      (await deps.directory.lookup(writeKey).catch((cause: unknown) => {
        throw new UnavailableError('service_unavailable', 'the source directory is unavailable; retry later', 1, { cause });
      }));
    if (!source) throw new AuthError('unknown_write_key', 'the write key names no source');
    outcome.sourceId = source.id;
    try {
      const { stored, rejected } = await store(route, source, body, text, shape, receivedAt, outcome);
      if (deps.debugEvents) recordCalls(deps.debugEvents, source.id, receivedAt, route, body, stored, rejected);
      return rejected;
    } catch (err) {
      deps.debugEvents?.record(source.id, failedRequestEvent(receivedAt, err, route.kind === 'single' ? body : undefined));
      throw err;
    }
  }

  /**
   * A flood must not cost the intake its CPU: a source named by the Authorization header that the
   * writer still knows to be refused (IntakeWriter.refusal) is refused again before its body is
   * read and parsed (Node discards the unread body once the answer is sent). A key in the body is
   * only known once it is parsed.
   * Returns the source the header names, if it names one, so that it is looked up once.
   */
  async function refuseEarly(req: IncomingMessage, outcome: Outcome): Promise<Source | undefined> {
    const writeKey = basicUser(req.headers.authorization);
    if (!writeKey) return undefined;
    const source = await deps.directory.lookup(writeKey).catch(() => undefined);
    const refused = source && deps.writer.refusal(source.id);
    if (!source || !refused) return source;
    outcome.sourceId = source.id;
    throw refusalError(source, refused);
  }

  /** The 429 for a request refused over its source's rate limit or budget. */
  function refusalError(source: PricedSource, refused: Refusal): UnavailableError {
    const nowS = Math.floor(deps.clock() / 1000);
    if (refused.kind === 'over_budget') {
      deps.metrics.overBudget.inc({ source: source.id });
      return new UnavailableError(
        'source_over_budget',
        `source ${source.id} holds its whole budget of Redis memory (the dedupe claims of its calls); nothing was stored; room comes back as its claims expire`,
        Math.max(1, refused.freesAtEpochSeconds - nowS),
      );
    }
    return new UnavailableError(
      'rate_limited',
      `source ${source.id} is over its limit of calls per second (taken at an even pace); a request is stored whole or not at all`,
      Math.max(1, Math.ceil(refused.retryAtMs / 1000) - nowS),
      { retryAtMs: refused.retryAtMs },
    );
  }

  async function submit(source: PricedSource, calls: NormalizedCall[]) {
    if (deps.memoryGuard.overLimit)
      throw new UnavailableError('overloaded', 'the event store is near its memory limit; nothing was stored; retry later', 5);
    if (deps.depthGuard.overLimit)
      throw new UnavailableError('service_unavailable', 'the route queue is over its depth limit; retry later', 5);
    if (deps.replicaGuard?.short)
      throw new UnavailableError(
        'not_replicated',
        `fewer than ${deps.replicaGuard.required} Redis replica(s) online to confirm the calls (durable mode); nothing was stored; retry later`,
        1,
      );
    const budgetBytes = budgetBytesOf(source, deps.sourceDefaults, deps.memoryGuard.maxmemory);
    const result = await deps.writer.submit({
      sourceId: source.id,
      ratePerSecond: ratePerSecondOf(source, deps.sourceDefaults),
      ...(budgetBytes !== undefined ? { budgetBytes } : {}),
      calls,
    });
    if (result.kind !== 'accepted') throw refusalError(source, result);
    return result;
  }

  async function store(
    route: IntakeRoute,
    source: PricedSource,
    body: Record<string, unknown>,
    text: string,
    shape: ReturnType<typeof inspectJsonText>,
    receivedAt: number,
    outcome: Outcome,
  ) {
    const { accepted, rejected } = interpretBody(route, body, {
      receivedAt,
      newMessageId: deps.newId,
      measureItems: itemsNeedMeasuring(shape, Buffer.byteLength(text), MAX_CALL_BYTES),
    });
    outcome.rejected = rejected.length;
    const items = route.kind === 'batch' ? (body['batch'] as unknown[]) : [];
    for (const r of rejected) outcome.calls.add({ type: callTypeOf(items[r.index]), outcome: 'rejected', reason: r.code });
    if (accepted.length === 0) return { stored: accepted, rejected };
    const result = await submit(source, accepted).catch((err: unknown) => {
      // Valid calls refused with their request (memory, queue depth, rate limit, Redis): counted by reason.
      const reason = err instanceof EventrelayError ? err.code : 'internal_error';
      outcome.refused = accepted.length;
      for (const call of accepted) outcome.calls.add({ type: call.type, outcome: 'rejected', reason });
      throw err;
    });
    // The batch holds every call of the request (repeats too); only new calls add claims and entries.
    deps.memoryGuard.noteStored(storedBytesOf(text.length, result.enqueued));
    outcome.accepted = result.enqueued;
    outcome.duplicates = result.duplicates;
    const duplicate = new Set(result.duplicateIndexes);
    accepted.forEach((call, i) => outcome.calls.add({ type: call.type, outcome: duplicate.has(i) ? 'duplicate' : 'accepted' }));
    return { stored: accepted, rejected };
  }
}

/**
 * A request's calls for the stats: duplicates count as accepted (their sender was told so); a single
 * call refused as a whole is one rejected call, and a refused batch's calls are rejected too, at
 * least one when its body could not be read (bad JSON, too large) and its calls are unknown.
 */
function sourceTally(route: IntakeRoute, outcome: Outcome): { accepted: number; rejected: number } {
  if (outcome.status !== 200)
    return { accepted: 0, rejected: route.kind === 'single' ? 1 : Math.max(1, outcome.rejected + outcome.refused) };
  return { accepted: outcome.accepted + outcome.duplicates, rejected: outcome.rejected };
}

/** A rejected batch item's type when it names a known one; `unknown` keeps the label set bounded. */
function callTypeOf(item: unknown): string {
  const type = item !== null && typeof item === 'object' ? (item as Record<string, unknown>)['type'] : undefined;
  return isCallType(type) ? type : 'unknown';
}

/** Accepted calls as normalized (duplicates included: they were accepted too), rejected items as sent. */
function recordCalls(
  debug: NonNullable<IntakeDeps['debugEvents']>,
  sourceId: string,
  receivedAt: number,
  route: IntakeRoute,
  body: Record<string, unknown>,
  accepted: readonly NormalizedCall[],
  rejected: readonly Rejection[],
): void {
  const at = new Date(receivedAt).toISOString();
  for (const call of accepted) debug.record(sourceId, { at, outcome: 'accepted', call: call });
  const items = route.kind === 'single' ? [] : (body['batch'] as unknown[]);
  for (const r of rejected) {
    const item = items[r.index];
    debug.record(sourceId, {
      at,
      outcome: 'rejected',
      code: r.code,
      message: `batch[${r.index}]: ${r.message}`,
      ...(item !== null && typeof item === 'object' && !Array.isArray(item) ? { call: item } : {}),
    });
  }
}

function failedRequestEvent(receivedAt: number, err: unknown, call: Record<string, unknown> | undefined): DebugEvent {
  const at = new Date(receivedAt).toISOString();
  const known = err instanceof EventrelayError ? err : undefined;
  return {
    at,
    outcome: 'rejected',
    code: known?.code ?? 'internal_error',
    message: known?.message ?? 'internal error',
    ...(call ? { call } : {}),
  };
}
