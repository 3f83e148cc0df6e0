/**
 * The ingest HTTP handler: ops endpoints, CORS preflight, and /v1/<route>[/] to the intake.
 * Routing is one table lookup (domain/routes.ts). A plain node:http handler rather than express:
 * the intake uses none of express's features, and its routing layer cost 5–11% of the CPU per
 * request on the bench (see docs/intake.md). The admin API, which has many routes, uses express.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleOps, type OpsDeps } from '@eventrelay/runtime';
import { routeFor } from '../domain/routes.js';
import { answerPreflight } from './cors.js';
import { sendJson } from './respond.js';
import { createIntakeHandler, type IntakeDeps } from './intake-handler.js';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export function createIngestHandler(deps: IntakeDeps & { ops: OpsDeps }): RequestHandler {
  const intake = createIntakeHandler(deps);
  return (req, res) => {
    if (handleOps(deps.ops, req, res)) return;
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    if (!path.startsWith('/v1/')) {
      req.resume();
      sendJson(res, 404, { success: false, code: 'not_found', message: `no route ${req.method ?? ''} ${path}` });
      return;
    }
    if (req.method === 'OPTIONS') {
      req.resume();
      answerPreflight(req, res);
      return;
    }
    const segment = path.slice(4).replace(/\/$/, '');
    const route = routeFor(segment);
    if (!route) {
      req.resume();
      sendJson(res, 404, { success: false, code: 'not_found', message: `no intake route /v1/${segment}` });
      return;
    }
    if (req.method !== 'POST') {
      req.resume();
      sendJson(res, 405, { success: false, code: 'method_not_allowed', message: `use POST for /v1/${segment}` });
      return;
    }
    intake(req, res, route, segment).catch((err: unknown) => {
      deps.logger.error({ err }, 'intake.defect');
      if (!res.headersSent) sendJson(res, 500, { success: false, code: 'internal_error', message: 'internal error' });
    });
  };
}
