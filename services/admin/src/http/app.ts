/**
 * The admin HTTP app: ops endpoints, then /admin/v1 with bearer authentication, body and query
 * validation from each route's declared schemas, and one error shape
 * (`{success: false, code, message, fields?}`). One log line per request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import {
  EventrelayError,
  RequestError,
  adminBodyValidator,
  adminQueryValidator,
  bodyDepthProblem,
  describeProblem,
  schemaProblems,
  type FieldProblem,
} from '@eventrelay/config';
import { handleOps, type Logger, type OpsDeps } from '@eventrelay/runtime';
import { authenticate, type AdminToken } from '../domain/tokens.js';
import type { AdminMetrics } from '../metrics.js';
import { ADMIN_BASE, type AdminRequest, type RouteSpec } from './route-spec.js';

export interface AppDeps {
  readonly routes: readonly RouteSpec[];
  readonly tokens: readonly AdminToken[];
  readonly logger: Logger;
  readonly metrics: AdminMetrics;
  readonly ops: OpsDeps;
  /** Serves the web console under /console/ (true when it answered). */
  readonly console?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

/** What a request's log line and metrics need, filled in as it goes. */
interface Trace {
  operation: string;
  tokenId?: string;
  code?: string;
}

export function createAdminHandler(deps: AppDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // Authentication comes before the body is read: a caller without a token learns nothing else.
  const publicPaths = new Set(deps.routes.filter((r) => r.public).map((r) => `${ADMIN_BASE}${r.path}`));
  app.use(ADMIN_BASE, (req: Request, res: Response, next: NextFunction) => {
    if (publicPaths.has(req.originalUrl.split('?', 1)[0] ?? '')) return next();
    const token = authenticate(req.headers.authorization, deps.tokens);
    if (!token) throw new RequestError('unauthorized', 'send Authorization: Bearer <ADMIN_TOKEN>');
    traceOf(res).tokenId = token.id;
    res.locals['token'] = token;
    next();
  });
  // Bodies are JSON whatever their Content-Type says, so `curl -d` works as it is.
  app.use(express.json({ type: () => true, limit: '1mb', strict: true }));
  // Depth before anything recurses over the body (the schema validator, the planners).
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const problem = bodyDepthProblem(req.body);
    if (problem) throw invalid([problem]);
    next();
  });

  for (const route of deps.routes) {
    const validateBody = route.body ? adminBodyValidator(route.body) : undefined;
    const validateQuery = route.query ? adminQueryValidator(route.query) : undefined;
    app[route.method](`${ADMIN_BASE}${route.path}`, async (req: Request, res: Response) => {
      const trace = traceOf(res);
      trace.operation = route.operationId;
      const token = (res.locals['token'] as AdminToken | undefined) ?? { id: 'public', digest: Buffer.alloc(0) };
      const body: unknown = validateBody ? (req.body ?? {}) : undefined;
      if (validateBody && !validateBody(body)) throw invalid(schemaProblems(validateBody.errors));
      const query: Record<string, unknown> = { ...(req.query as Record<string, unknown>) };
      if (validateQuery && !validateQuery(query)) throw invalid(schemaProblems(validateQuery.errors));
      // The validator coerces "1e309" to Infinity and then lets it past minimum and maximum.
      const infinite = Object.keys(query).filter((k) => typeof query[k] === 'number' && !Number.isFinite(query[k]));
      if (infinite.length > 0) throw invalid(infinite.map((field) => ({ field, message: 'must be a finite number' })));
      const answer = await route.handle({ params: req.params as Record<string, string>, query, body, token } as AdminRequest<never, never>);
      if (answer.body === undefined) res.status(answer.status).end();
      else res.status(answer.status).json(answer.body);
    });
  }

  // Paths that exist for other methods get 405 (after authentication, so nothing is revealed).
  const patterns = deps.routes.map((r) => ({
    method: r.method.toUpperCase(),
    regex: new RegExp(`^${ADMIN_BASE}${r.path.replace(/:[A-Za-z]+/g, '[^/]+')}/?$`),
  }));
  app.use((req: Request) => {
    const allowed = patterns.filter((p) => p.regex.test(req.path)).map((p) => p.method);
    if (allowed.length > 0) throw new MethodNotAllowed(req.method, req.path, allowed);
    throw new RequestError('not_found', `no route ${req.method} ${req.path}`);
  });

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const trace = traceOf(res);
    const known = toKnownError(err);
    if (!known) deps.logger.error({ err, operation: trace.operation }, 'admin.defect');
    const status = known?.httpStatus ?? 500;
    const code = known?.code ?? 'internal_error';
    trace.code = code;
    if (err instanceof MethodNotAllowed) res.setHeader('Allow', err.allowed.join(', '));
    if (code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer realm="eventrelay admin"');
    const fields = known instanceof RequestError && known.fields.length > 0 ? { fields: known.fields } : {};
    res.status(status).json({ success: false, code, message: known ? known.message : 'internal error', ...fields });
  });

  return (req, res) => {
    if (handleOps(deps.ops, req, res)) return;
    if (deps.console?.(req, res)) return;
    const started = performance.now();
    const trace: Trace = { operation: 'unknown' };
    traces.set(res, trace);
    res.on('finish', () => {
      const seconds = (performance.now() - started) / 1000;
      deps.metrics.requests.inc({ operation: trace.operation, status: String(res.statusCode) });
      deps.metrics.duration.observe({ operation: trace.operation }, seconds);
      deps.logger.info(
        {
          method: req.method,
          operation: trace.operation,
          status: res.statusCode,
          code: trace.code,
          tokenId: trace.tokenId,
          ms: Math.round(seconds * 100_000) / 100,
        },
        'admin.request',
      );
    });
    app(req, res);
  };
}

const traces = new WeakMap<ServerResponse, Trace>();

function traceOf(res: ServerResponse): Trace {
  let trace = traces.get(res);
  if (!trace) traces.set(res, (trace = { operation: 'unknown' }));
  return trace;
}

function invalid(problems: FieldProblem[]): RequestError {
  return new RequestError('invalid_request', problems.map(describeProblem).join('; '), problems);
}

class MethodNotAllowed extends EventrelayError {
  constructor(
    method: string,
    path: string,
    readonly allowed: string[],
  ) {
    super('method_not_allowed', `${path} does not take ${method}; it takes ${allowed.join(', ')}`);
  }
}

/** Our own errors, and body-parser's (bad JSON, too large) translated to ours. */
function toKnownError(err: unknown): EventrelayError | undefined {
  if (err instanceof EventrelayError) return err;
  const type = (err as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') return new RequestError('payload_too_large', 'the request body is over 1 MB');
  if (type === 'entity.parse.failed')
    return new RequestError('invalid_request', `the request body is not valid JSON: ${(err as Error).message}`, [
      { field: '(body)', message: 'is not valid JSON' },
    ]);
  if ((typeof type === 'string' && type.startsWith('encoding.')) || type === 'charset.unsupported' || type === 'request.aborted')
    return new RequestError('invalid_request', (err as Error).message);
  // Anything else body-parser marks as the client's fault (a gzip body that does not inflate, a
  // stream cut short): its message is meant to be shown.
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500 && err instanceof Error)
    return new RequestError('invalid_request', `the request body cannot be read: ${err.message}`, [
      { field: '(body)', message: 'cannot be read' },
    ]);
  return undefined;
}
