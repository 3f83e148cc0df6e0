/** What happened to a destination's calls: the attempt log, the dead letters, replays and their progress, and test sends. */
import {
  RequestError,
  type DeadLettersQuery,
  type DeliveriesQuery,
  type ReplayRequest,
  type TestSendRequest,
  type TestSendResult,
} from '@eventrelay/config';
import { isDeadLetterCursor } from '@eventrelay/stores';
import { existingDestination } from '../../domain/destinations.js';
import { attemptFilter, deadLetterFilter } from '../../domain/log-filters.js';
import { replaySelection } from '../../domain/replay.js';
import { assertFiltersSend, sampleCall, testSendTarget } from '../../domain/test-send.js';
import { auditEntry } from '../../domain/write-context.js';
import type { AdminRequest, RouteSpec } from '../route-spec.js';
import { ok, param, type RouteKit } from './kit.js';

export function deliveryRecordRoutes({ deps, ctx, read, logCursor, cursorProblem }: RouteKit): RouteSpec[] {
  return [
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
        const progress = await deps.replays.read(id, replayId);
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
        const { source, destination } = testSendTarget(await deps.store.snapshot(), id, req.body);
        const messageId = deps.newTestMessageId();
        const call = sampleCall(req.body.type, messageId, ctx(req).now, id);
        assertFiltersSend(destination, call);
        await deps.intake.route(source.id, call);
        await deps.audit.record(auditEntry(ctx(req), 'destination.test_send', id, { messageId, sourceId: source.id, type: call.type }));
        const body: TestSendResult = { messageId, sourceId: source.id, call };
        return { status: 202, body };
      },
    },
  ];
}
