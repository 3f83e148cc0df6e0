/**
 * The ingest HTTP app: ops endpoints, CORS preflight, and /v1/<route>[/] to the intake handler.
 * Routing is one table lookup (domain/routes.ts), so express only supplies the server plumbing.
 */
import express from 'express';
import { handleOps, type OpsDeps } from '@eventrelay/runtime';
import { answerPreflight } from './cors.js';
import { sendJson } from './respond.js';
import { createIntakeHandler, type IntakeDeps } from './intake-handler.js';

export function createIngestApp(deps: IntakeDeps & { ops: OpsDeps }): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const intake = createIntakeHandler(deps);

  app.use((req, res, next) => {
    if (handleOps(deps.ops, req, res)) return;
    const path = req.path;
    if (!path.startsWith('/v1/')) {
      next();
      return;
    }
    if (req.method === 'OPTIONS') {
      answerPreflight(req, res);
      return;
    }
    const segment = path.slice(4).replace(/\/$/, '');
    if (req.method !== 'POST') {
      req.resume();
      sendJson(res, 405, { success: false, code: 'method_not_allowed', message: `use POST for /v1/${segment}` });
      return;
    }
    void intake(req, res, segment);
  });
  app.use((req, res) => {
    req.resume();
    sendJson(res, 404, { success: false, code: 'not_found', message: `no route ${req.method} ${req.path}` });
  });
  // Express's own default would answer HTML; every answer here is JSON.
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    deps.logger.error({ err }, 'intake.defect');
    if (!res.headersSent) sendJson(res, 500, { success: false, code: 'internal_error', message: 'internal error' });
  });
  return app;
}
