/** Sources: create, read, change, delete, rotate the write key, and the event debugger. */
import type { PageQuery, SourceCreate, SourcePatch } from '@eventrelay/config';
import { existingSource, planCreateSource, planDeleteSource, planPatchSource, planRotateWriteKey } from '../../domain/sources.js';
import type { AdminRequest, RouteSpec } from '../route-spec.js';
import { byId, ok, param, type RouteKit } from './kit.js';

export function sourceRoutes({ deps, ctx, write, read, logCursor }: RouteKit): RouteSpec[] {
  return [
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
  ];
}
