/**
 * Every admin route (docs/spec.md §6), each a thin translator: read or plan through the domain,
 * write through the store, answer.
 */
import {
  RequestError,
  destinationCatalog,
  exportConfig,
  type Audience,
  type CatalogEntry,
  type ConfigPlan,
  type ConfigSnapshot,
  type ConsoleInfo,
  type DeadLettersQuery,
  type DeliveriesQuery,
  type DestinationCreate,
  type DestinationPatch,
  type AudienceCreate,
  type PageQuery,
  type RegulationCreate,
  type RegulationJob,
  type ReplayRequest,
  type SourceCreate,
  type SourcePatch,
  type StatsQuery,
  type TestSendRequest,
  type TestSendResult,
} from '@eventrelay/config';
import {
  isDeadLetterCursor,
  type AttemptLog,
  type AuditLog,
  type ConfigStore,
  type DeadLetterStore,
  type DeletionReceipts,
  type RegulationStore,
  type ReplayProgressStore,
  type SourceEvents,
  type StatsCounters,
} from '@eventrelay/stores';
import { existingAudience, planCreateAudience, planDeleteAudience, toAudienceView } from '../domain/audiences.js';
import { planRegulation, regulationView } from '../domain/regulations.js';
import type { AudienceStatus } from '../adapters/audience-status.js';
import { existingDestination, planCreateDestination, planDeleteDestination, planPatchDestination } from '../domain/destinations.js';
import { toDestinationView } from '../domain/destination-view.js';
import { replaySelection } from '../domain/replay.js';
import { buildStatsReport, planWindow } from '../domain/stats.js';
import { attemptFilter, deadLetterFilter } from '../domain/log-filters.js';
import { sampleCall, testSendTarget } from '../domain/test-send.js';
import { existingSource, planCreateSource, planDeleteSource, planPatchSource, planRotateWriteKey } from '../domain/sources.js';
import { auditEntry, type WriteContext } from '../domain/write-context.js';
import type { Replayer } from '../adapters/replayer.js';
import type { IntakeQueue } from '../adapters/intake-queue.js';
import type { AdminRequest, Answer, RouteSpec } from './route-spec.js';

export interface AdminDeps {
  readonly store: Pick<ConfigStore, 'snapshot' | 'update'>;
  readonly attempts: Pick<AttemptLog, 'page'>;
  readonly deadLetters: Pick<DeadLetterStore, 'page'>;
  readonly replayer: Pick<Replayer, 'replay'>;
  /** What became of each replay's calls. */
  readonly replays: Pick<ReplayProgressStore, 'read'>;
  /** The route queue, for test sends. */
  readonly intake: Pick<IntakeQueue, 'route'>;
  /** What the console shows of this installation. */
  readonly info: ConsoleInfo;
  readonly audit: Pick<AuditLog, 'page' | 'record'>;
  readonly events: Pick<SourceEvents, 'page'>;
  readonly audienceStatus: Pick<AudienceStatus, 'read'>;
  readonly regulations: Pick<RegulationStore, 'create' | 'get'>;
  /** What became of each deletion's delete notices, per destination. */
  readonly receipts: Pick<DeletionReceipts, 'read'>;
  /** The per-minute counts webhook-delivery and ingest keep, read for the stats. */
  readonly stats: Pick<StatsCounters, 'read'>;
  /** Hands a regulation to the audiences service (the regulation queue, job id = regulation id). */
  readonly queueRegulation: (job: RegulationJob) => Promise<void>;
  readonly clock: () => number;
  /** A new random id, e.g. `src_1f3a…`. */
  readonly newId: (kind: 'src' | 'dst' | 'aud' | 'reg' | 'rpl') => string;
  /** A new random messageId for a test send, `test-…`. */
  readonly newTestMessageId: () => string;
  /** A new write key: long and random. */
  readonly newWriteKey: () => string;
  /** The OpenAPI document, built from these routes. */
  readonly openApi: () => unknown;
}

const ok = (body: unknown): Answer => ({ status: 200, body });

export function adminRoutes(deps: AdminDeps): RouteSpec[] {
  const ctx = (req: AdminRequest): WriteContext => ({ tokenId: req.token.id, now: new Date(deps.clock()).toISOString() });
  const write = <R>(plan: (snapshot: ConfigSnapshot) => ConfigPlan<R>) => deps.store.update(plan);
  const read = async <R>(pick: (snapshot: ConfigSnapshot) => R) => pick(await deps.store.snapshot());
  const cursorProblem = (ok: boolean) => {
    if (!ok)
      throw new RequestError('invalid_request', 'cursor is not one this API gave out', [
        { field: 'cursor', message: 'is not one this API gave out' },
      ]);
  };
  const logCursor = (cursor: string | undefined) => cursorProblem(cursor === undefined || /^\d{1,18}$/.test(cursor));
  const audienceViews = async (audiences: Audience[]) => {
    const status = await deps.audienceStatus.read(audiences.map((a) => a.id));
    return audiences.map((a, i) => toAudienceView(a, status[i]?.pass ?? {}, status[i]?.members ?? 0));
  };

  return [
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'getOpenApi',
      summary: 'This document (OpenAPI 3.1), served without a token',
      answer: { status: 200, description: 'the OpenAPI document' },
      errors: [],
      public: true,
      handle: () => Promise.resolve(ok(deps.openApi())),
    },
    {
      method: 'get',
      path: '/info',
      operationId: 'getInfo',
      summary: "This installation: eventrelay's version and the intake's public URL (ADMIN_INTAKE_URL)",
      answer: { status: 200, schema: 'ConsoleInfo', description: 'the installation' },
      errors: [],
      handle: () => Promise.resolve(ok(deps.info)),
    },
    {
      method: 'get',
      path: '/catalog',
      operationId: 'listCatalog',
      summary: 'The destination types available, each with the JSON Schema of its settings',
      answer: { status: 200, schema: 'CatalogEntry', list: true, description: 'the catalog' },
      errors: [],
      handle: () =>
        Promise.resolve(
          ok(destinationCatalog.map(({ name, description, settingsSchema }): CatalogEntry => ({ name, description, settingsSchema }))),
        ),
    },
    {
      method: 'get',
      path: '/config',
      operationId: 'exportConfig',
      summary: 'Everything as a declarative config file (EVENTRELAY_CONFIG), shared secrets and header values left out',
      answer: {
        status: 200,
        schema: 'EventrelayConfig',
        description: 'the config; applying it again changes nothing, and keeps the stored secrets and header values',
      },
      errors: [],
      handle: async () => ok(await read(exportConfig)),
    },
    {
      method: 'get',
      path: '/stats',
      operationId: 'getStats',
      summary:
        'Per destination (delivered, retrying, dead-lettered, attempts, lag) and per source (accepted, rejected): a series over the last hour by minute, or the last day by ten minutes, with totals',
      query: 'StatsQuery',
      answer: { status: 200, schema: 'StatsReport', description: 'every destination and source, by id' },
      errors: ['invalid_request'],
      handle: async (req: AdminRequest<never, StatsQuery>) => {
        const now = deps.clock();
        const plan = planWindow(req.query.window ?? 'hour', now);
        const [raw, config] = await Promise.all([
          deps.stats.read(plan.resolution, plan.buckets),
          read((s) => ({ destinations: [...s.destinations.values()], sources: [...s.sources.values()] })),
        ]);
        return ok(buildStatsReport(plan, raw, config, now));
      },
    },
    // Sources
    {
      method: 'get',
      path: '/sources',
      operationId: 'listSources',
      summary: 'All sources, by id',
      answer: { status: 200, schema: 'Source', list: true, description: 'the sources' },
      errors: [],
      handle: async () => ok(await read((s) => [...s.sources.values()].sort(byId))),
    },
    {
      method: 'post',
      path: '/sources',
      operationId: 'createSource',
      summary: 'Create a source; its write key is generated (and its id, unless given)',
      body: 'SourceCreate',
      answer: { status: 201, schema: 'Source', description: 'the new source with its write key' },
      errors: ['invalid_request', 'conflict'],
      handle: async (req: AdminRequest<SourceCreate>) => ({
        status: 201,
        body: await write((s) => planCreateSource(s, req.body, { id: deps.newId('src'), writeKey: deps.newWriteKey() }, ctx(req))),
      }),
    },
    {
      method: 'get',
      path: '/sources/:id',
      operationId: 'getSource',
      summary: 'One source',
      answer: { status: 200, schema: 'Source', description: 'the source' },
      errors: ['not_found'],
      handle: async (req) => ok(await read((s) => existingSource(s, param(req, 'id')))),
    },
    {
      method: 'patch',
      path: '/sources/:id',
      operationId: 'updateSource',
      summary: 'Rename a source, change its type or rate limit (JSON merge patch)',
      body: 'SourcePatch',
      answer: { status: 200, schema: 'Source', description: 'the source as stored' },
      errors: ['invalid_request', 'not_found'],
      handle: async (req: AdminRequest<SourcePatch>) => ok(await write((s) => planPatchSource(s, param(req, 'id'), req.body, ctx(req)))),
    },
    {
      method: 'delete',
      path: '/sources/:id',
      operationId: 'deleteSource',
      summary: 'Delete a source: its write key stops working within 2 s and it is disconnected from every destination',
      answer: { status: 204, description: 'deleted' },
      errors: ['not_found'],
      handle: async (req) => {
        await write((s) => planDeleteSource(s, param(req, 'id'), ctx(req)));
        return { status: 204 };
      },
    },
    {
      method: 'post',
      path: '/sources/:id/rotate-write-key',
      operationId: 'rotateWriteKey',
      summary: 'Give a source a new write key; the old one stops working within 2 s',
      answer: { status: 200, schema: 'Source', description: 'the source with its new write key' },
      errors: ['not_found'],
      handle: async (req) => ok(await write((s) => planRotateWriteKey(s, param(req, 'id'), deps.newWriteKey(), ctx(req)))),
    },
    {
      method: 'get',
      path: '/sources/:id/events',
      operationId: 'listSourceEvents',
      summary: 'Event debugger: the latest calls the intake accepted or rejected for the source, newest first, secrets redacted',
      query: 'PageQuery',
      answer: { status: 200, schema: 'DebugEventPage', description: 'a page of events' },
      errors: ['invalid_request', 'not_found'],
      handle: async (req: AdminRequest<never, PageQuery>) => {
        const id = param(req, 'id');
        await read((s) => existingSource(s, id));
        logCursor(req.query.cursor);
        return ok(await deps.events.page(id, { limit: req.query.limit ?? 100, cursor: req.query.cursor }));
      },
    },
    // Destinations
    {
      method: 'get',
      path: '/destinations',
      operationId: 'listDestinations',
      summary: 'All destinations, by id (shared secrets and header values shown only as hints)',
      answer: { status: 200, schema: 'DestinationView', list: true, description: 'the destinations' },
      errors: [],
      handle: async () => ok(await read((s) => [...s.destinations.values()].sort(byId).map(toDestinationView))),
    },
    {
      method: 'post',
      path: '/destinations',
      operationId: 'createDestination',
      summary: 'Create a destination of a catalog type; it starts disabled unless "enabled": true',
      body: 'DestinationCreate',
      answer: { status: 201, schema: 'DestinationView', description: 'the new destination' },
      errors: ['invalid_request', 'conflict'],
      handle: async (req: AdminRequest<DestinationCreate>) => ({
        status: 201,
        body: toDestinationView(await write((s) => planCreateDestination(s, req.body, deps.newId('dst'), ctx(req)))),
      }),
    },
    {
      method: 'get',
      path: '/destinations/:id',
      operationId: 'getDestination',
      summary: 'One destination',
      answer: { status: 200, schema: 'DestinationView', description: 'the destination' },
      errors: ['not_found'],
      handle: async (req) => ok(toDestinationView(await read((s) => existingDestination(s, param(req, 'id'))))),
    },
    {
      method: 'patch',
      path: '/destinations/:id',
      operationId: 'updateDestination',
      summary: 'Change URLs, headers, secret, sources or the enabled switch (JSON merge patch); takes effect everywhere within 2 s',
      body: 'DestinationPatch',
      answer: { status: 200, schema: 'DestinationView', description: 'the destination as stored' },
      errors: ['invalid_request', 'not_found'],
      handle: async (req: AdminRequest<DestinationPatch>) =>
        ok(toDestinationView(await write((s) => planPatchDestination(s, param(req, 'id'), req.body, ctx(req))))),
    },
    {
      method: 'delete',
      path: '/destinations/:id',
      operationId: 'deleteDestination',
      summary: 'Delete a destination with its attempt log and dead letters; its queued messages are dropped',
      answer: { status: 204, description: 'deleted' },
      errors: ['not_found'],
      handle: async (req) => {
        await write((s) => planDeleteDestination(s, param(req, 'id'), ctx(req)));
        return { status: 204 };
      },
    },
    {
      method: 'get',
      path: '/destinations/:id/deliveries',
      operationId: 'listDeliveries',
      summary:
        'The attempt log, newest first, optionally filtered by outcome, status class, messageId and time (a filtered page looks at most 5,000 entries)',
      query: 'DeliveriesQuery',
      answer: { status: 200, schema: 'DeliveryPage', description: 'a page of attempts' },
      errors: ['invalid_request', 'not_found'],
      handle: async (req: AdminRequest<never, DeliveriesQuery>) => {
        const id = param(req, 'id');
        await read((s) => existingDestination(s, id));
        logCursor(req.query.cursor);
        const filter = attemptFilter(req.query);
        return ok(await deps.attempts.page(id, { limit: req.query.limit ?? 100, cursor: req.query.cursor, filter }));
      },
    },
    {
      method: 'get',
      path: '/destinations/:id/dead-letters',
      operationId: 'listDeadLetters',
      summary:
        'Messages no URL accepted, newest first, optionally filtered by text (q) and time (a page filtered by q looks at most 5,000 letters)',
      query: 'DeadLettersQuery',
      answer: { status: 200, schema: 'DeadLetterPage', description: 'a page of dead letters' },
      errors: ['invalid_request', 'not_found'],
      handle: async (req: AdminRequest<never, DeadLettersQuery>) => {
        const id = param(req, 'id');
        await read((s) => existingDestination(s, id));
        cursorProblem(req.query.cursor === undefined || isDeadLetterCursor(req.query.cursor));
        const filter = deadLetterFilter(req.query);
        return ok(await deps.deadLetters.page(id, { limit: req.query.limit ?? 100, cursor: req.query.cursor, filter }));
      },
    },
    {
      method: 'post',
      path: '/destinations/:id/replay',
      operationId: 'replayDeadLetters',
      summary:
        'Deliver dead letters again (all, given messageIds, those since a time, or those a filter matches), each with a fresh retry window and its messageId; follow it with GET /destinations/:id/replays/:replayId',
      body: 'ReplayRequest',
      answer: { status: 200, schema: 'ReplayResult', description: 'how many were put back on the delivery queue' },
      errors: ['invalid_request', 'not_found', 'conflict'],
      handle: async (req: AdminRequest<ReplayRequest>) => {
        const id = param(req, 'id');
        const selection = replaySelection(req.body, await read((s) => existingDestination(s, id)));
        const result = await deps.replayer.replay(id, selection, deps.newId('rpl'));
        await deps.audit.record(
          auditEntry(ctx(req), 'destination.replay', id, {
            selection: selection.kind,
            replayed: result.replayed,
            replayId: result.replayId,
          }),
        );
        return ok(result);
      },
    },
    {
      method: 'get',
      path: '/destinations/:id/replays/:replayId',
      operationId: 'getReplay',
      summary: 'What became of the calls of one replay: delivered, dead-lettered again, or still pending (kept 7 days)',
      answer: { status: 200, schema: 'ReplayProgress', description: 'the replay' },
      errors: ['not_found'],
      handle: async (req) => {
        const id = param(req, 'id');
        await read((s) => existingDestination(s, id));
        const replayId = param(req, 'replayId');
        const progress = await deps.replays.read(replayId);
        if (!progress || progress.destinationId !== id)
          throw new RequestError('not_found', `no replay "${replayId}" of destination "${id}"`);
        return ok(progress);
      },
    },
    {
      method: 'post',
      path: '/destinations/:id/test-send',
      operationId: 'testSendDestination',
      summary:
        "Send one sample call of a type through the pipeline from one of the destination's sources (every enabled destination connected to that source gets it); its attempts show in the deliveries under its messageId",
      body: 'TestSendRequest',
      answer: {
        status: 202,
        schema: 'TestSendResult',
        description: 'on the route queue; poll GET /destinations/:id/deliveries?messageId= for its attempts',
      },
      errors: ['invalid_request', 'not_found', 'conflict'],
      handle: async (req: AdminRequest<TestSendRequest>) => {
        const id = param(req, 'id');
        const { source } = testSendTarget(await deps.store.snapshot(), id, req.body);
        const messageId = deps.newTestMessageId();
        const call = sampleCall(req.body.type, messageId, ctx(req).now, id);
        await deps.intake.route(source.id, call);
        await deps.audit.record(auditEntry(ctx(req), 'destination.test_send', id, { messageId, sourceId: source.id, type: call.type }));
        const body: TestSendResult = { messageId, sourceId: source.id, call };
        return { status: 202, body };
      },
    },
    // Audiences
    {
      method: 'get',
      path: '/audiences',
      operationId: 'listAudiences',
      summary: 'All audiences, by id, with their membership trait and member counts',
      answer: { status: 200, schema: 'AudienceView', list: true, description: 'the audiences' },
      errors: [],
      handle: async () => ok(await audienceViews(await read((s) => [...s.audiences.values()].sort(byId)))),
    },
    {
      method: 'post',
      path: '/audiences',
      operationId: 'createAudience',
      summary:
        'Create an audience; within seconds every current member is sent one identify with the trait true (the backfill), and later only changes',
      body: 'AudienceCreate',
      answer: {
        status: 201,
        schema: 'AudienceView',
        description: 'the new audience (membership pending until the audiences service starts its backfill)',
      },
      errors: ['invalid_request', 'conflict'],
      handle: async (req: AdminRequest<AudienceCreate>) => {
        const audience = await write((s) => planCreateAudience(s, req.body, deps.newId('aud'), ctx(req)));
        const [view] = await audienceViews([audience]);
        return { status: 201, body: view };
      },
    },
    {
      method: 'get',
      path: '/audiences/:id',
      operationId: 'getAudience',
      summary: 'One audience',
      answer: { status: 200, schema: 'AudienceView', description: 'the audience' },
      errors: ['not_found'],
      handle: async (req) => {
        const [view] = await audienceViews([await read((s) => existingAudience(s, param(req, 'id')))]);
        return ok(view);
      },
    },
    {
      method: 'delete',
      path: '/audiences/:id',
      operationId: 'deleteAudience',
      summary: 'Delete an audience with its membership; members are not sent false',
      answer: { status: 204, description: 'deleted' },
      errors: ['not_found'],
      handle: async (req) => {
        await write((s) => planDeleteAudience(s, param(req, 'id'), ctx(req)));
        return { status: 204 };
      },
    },
    // Regulations
    {
      method: 'post',
      path: '/regulations',
      operationId: 'createRegulation',
      summary:
        'Delete and/or suppress users: delete notifications to every affected source with Webhooks enabled, their profiles erased, their later calls dropped',
      body: 'RegulationCreate',
      answer: {
        status: 202,
        schema: 'Regulation',
        description: 'accepted; the audiences service carries it out (poll GET /regulations/:id)',
      },
      errors: ['invalid_request'],
      handle: async (req: AdminRequest<RegulationCreate>) => {
        const { job, record } = planRegulation(await deps.store.snapshot(), req.body, deps.newId('reg'), ctx(req).now);
        // Queued first: if the record cannot be written after, the job still runs and writes it.
        await deps.queueRegulation(job);
        await deps.regulations.create(record);
        await deps.audit.record(
          auditEntry(ctx(req), 'regulation.create', job.id, {
            regulationType: record.regulationType,
            subjects: record.subjectCount,
            ...(record.sourceIds ? { sourceIds: record.sourceIds } : {}),
          }),
        );
        return { status: 202, body: regulationView(record, []) };
      },
    },
    {
      method: 'get',
      path: '/regulations/:id',
      operationId: 'getRegulation',
      summary:
        'A regulation: status (pending, running, finished), counts and, for a deletion, its receipts: per destination, whether its delete notices were delivered',
      answer: { status: 200, schema: 'Regulation', description: 'the regulation' },
      errors: ['not_found'],
      handle: async (req) => {
        const id = param(req, 'id');
        const [found, receipts] = await Promise.all([deps.regulations.get(id), deps.receipts.read(id)]);
        if (!found) throw new RequestError('not_found', `no regulation "${id}"`);
        return ok(regulationView(found, receipts));
      },
    },
    {
      method: 'get',
      path: '/audit',
      operationId: 'listAudit',
      summary: 'Every write through this API, newest first: who (token id), what, when',
      query: 'PageQuery',
      answer: { status: 200, schema: 'AuditPage', description: 'a page of audit entries' },
      errors: ['invalid_request'],
      handle: async (req: AdminRequest<never, PageQuery>) => {
        logCursor(req.query.cursor);
        return ok(await deps.audit.page({ limit: req.query.limit ?? 100, cursor: req.query.cursor }));
      },
    },
  ];
}

function param(req: AdminRequest, name: string): string {
  return req.params[name] ?? '';
}

function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
