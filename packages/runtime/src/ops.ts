/**
 * The operational endpoints every process serves (SPEC section 1): /healthz (alive), /readyz
 * (dependencies answer), /metrics (Prometheus text). Workers serve them on their metrics port;
 * ingest mounts the same handler in front of its intake routes.
 */
import http from 'node:http';
import type { Registry } from 'prom-client';

export type ReadinessCheck = () => Promise<void>;

export interface OpsDeps {
  registry: Registry;
  /** Each rejects with a reason when the process is not ready. */
  readiness: Record<string, ReadinessCheck>;
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
      send(res, failures.length === 0 ? 200 : 503, 'application/json', JSON.stringify(failures.length === 0 ? { status: 'ready' } : { status: 'not_ready', failures })),
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

/** A standalone ops server for processes that have no HTTP API of their own. */
export function startOpsServer(deps: OpsDeps, port: number, host = '0.0.0.0'): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (!handleOps(deps, req, res)) send(res, 404, 'application/json', '{"status":"not_found"}');
  });
  return listen(server, port, host);
}

export function listen(server: http.Server, port: number, host: string): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

export function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // Keep-alive sockets would hold close() open until they time out.
    server.closeIdleConnections();
  });
}
