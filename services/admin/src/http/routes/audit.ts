/** The audit log of every write. */
import type { PageQuery } from '@eventrelay/config';
import type { AdminRequest, RouteSpec } from '../route-spec.js';
import { ok, type RouteKit } from './kit.js';

export function auditRoutes({ deps, logCursor }: RouteKit): RouteSpec[] {
  return [
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
