/**
 * The operational endpoints every process serves (docs/spec.md §1): /healthz (alive), /readyz
 * (dependencies answer), /metrics (Prometheus text). Ingest mounts the handler in front of its
 * intake routes; workers will mount it on their metrics port.
 */
import http from 'node:http';
import type { Registry } from 'prom-client';

export type ReadinessCheck = () => Promise<void>;

export interface OpsDeps {
  registry: Registry;
  /** Each rejects with a reason when the process is not ready. */
  readiness: Record<string, ReadinessCheck>;
}

/** A readiness check that fails once shutdown has begun, so load balancers stop sending work. */
export function shutdownGate(): { check: ReadinessCheck; begin: () => void } {
  let closing = false;
  return {
    check: () => (closing ? Promise.reject(new Error('shutting down')) : Promise.resolve()),
    begin: () => void (closing = true),
  };
}

/** Answers the request and returns true when the path is one of the ops endpoints. */
export function handleOps(deps: OpsDeps, req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (path === '/healthz') {
    send(res, 200, 'application/json', '{"status":"ok"}');
    return true;
  }
  if (path === '/readyz') {
    void readiness(deps.readiness).then((failures) =>
      send(
        res,
        failures.length === 0 ? 200 : 503,
        'application/json',
        JSON.stringify(failures.length === 0 ? { status: 'ready' } : { status: 'not_ready', failures }),
      ),
    );
    return true;
  }
  if (path === '/metrics') {
    deps.registry.metrics().then(
      (text) => send(res, 200, deps.registry.contentType, text),
      (err: Error) => send(res, 500, 'text/plain', err.message),
    );
    return true;
  }
  return false;
}

async function readiness(checks: Record<string, ReadinessCheck>): Promise<{ check: string; reason: string }[]> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([check, run]) => {
      try {
        await withTimeout(run(), 1000);
        return undefined;
      } catch (err) {
        return { check, reason: err instanceof Error ? err.message : String(err) };
      }
    }),
  );
  return results.filter((r): r is { check: string; reason: string } => r !== undefined);
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e: unknown) => (clearTimeout(timer), reject(e instanceof Error ? e : new Error(String(e)))),
    );
  });
}

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

/** Responses not yet finished, per server, so that shutdown can tell them to close. */
const unfinished = new WeakMap<http.Server, Set<http.ServerResponse>>();

export function listen(server: http.Server, port: number, host: string): Promise<http.Server> {
  const responses = new Set<http.ServerResponse>();
  unfinished.set(server, responses);
  server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    responses.add(res);
    res.once('close', () => responses.delete(res));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/**
 * Stops accepting and resolves once every connection has ended. SDKs hold keep-alive connections
 * open, and close() alone neither ends a connection that is busy at the moment nor stops it from
 * carrying further requests: every answer not yet sent (in flight or new) says `Connection: close`,
 * and connections that fall idle are closed as they do, so in-flight requests finish and nothing
 * new is taken. Servers must have been started with listen() below for in-flight answers to be told.
 */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    for (const res of unfinished.get(server) ?? []) if (!res.headersSent) res.setHeader('Connection', 'close');
    server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => res.setHeader('Connection', 'close'));
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * The ops endpoints on a port of their own, for the workers (router, webhook-delivery), which
 * serve nothing else over HTTP. Anything else answers 404.
 */
export async function startOpsServer(port: number, host: string, deps: OpsDeps): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    if (!handleOps(deps, req, res))
      send(res, 404, 'application/json', '{"error":{"code":"not_found","message":"the ops server serves /healthz, /readyz and /metrics"}}');
  });
  await listen(server, port, host);
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : port };
}
