/**
 * The life of an HTTP service (ingest, admin) once its handler is built: listen, log
 * `<name>.listening`, and shut down in order on request: stop accepting (readiness fails, in-flight
 * requests finish) → release queues, caches and Redis.
 */
import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import type { Logger } from 'pino';
import { closeServer, listen } from './ops.js';
import type { ShutdownStep } from './shutdown.js';

export interface HttpServiceParts {
  /** For the log line `<name>.listening`. */
  readonly name: string;
  readonly handler: RequestListener;
  readonly port: number;
  readonly host: string;
  readonly logger: Logger;
  /** Called when shutdown begins, before the server closes: /readyz starts failing. */
  readonly stopAccepting: () => void;
  /** Closes what the service opened: queues, caches, buffers, Redis. Also run when listen fails. */
  readonly release: () => Promise<void>;
  /** What `release` closes, for the shutdown log. */
  readonly releasing: string;
  /**
   * Slow-client bounds, for a public endpoint (ingest sets them from its env). Unset: keep-alive
   * 65 s, request 30 s, Node's defaults otherwise.
   */
  readonly limits?: {
    readonly headersTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly keepAliveTimeoutMs: number;
    /** 0 = no limit. */
    readonly maxConnections: number;
  };
}

export interface RunningHttpService {
  readonly server: Server;
  readonly port: number;
  readonly shutdownSteps: ShutdownStep[];
  close(): Promise<void>;
}

export async function serveHttp(parts: HttpServiceParts): Promise<RunningHttpService> {
  const limits = parts.limits;
  const options: ServerOptions = limits
    ? {
        requestTimeout: limits.requestTimeoutMs,
        // Node refuses a headers timeout above the request timeout.
        headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
        keepAliveTimeout: limits.keepAliveTimeoutMs,
        // Node checks both timeouts on this interval (default 30 s): a 10 s bound needs a finer check.
        connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
      }
    : {};
  const server = createServer(options, parts.handler);
  // Longer than common load balancer idle timeouts, so the balancer closes first; and a bound on
  // how long a slow client may take to send its request.
  server.keepAliveTimeout = limits?.keepAliveTimeoutMs ?? 65_000;
  server.requestTimeout = limits?.requestTimeoutMs ?? 30_000;
  if (limits && limits.maxConnections > 0) server.maxConnections = limits.maxConnections;
  try {
    await listen(server, parts.port, parts.host);
  } catch (err) {
    await parts.release();
    throw err;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : parts.port;
  parts.logger.info({ port }, `${parts.name}.listening`);
  const shutdownSteps: ShutdownStep[] = [
    {
      name: 'stop accepting, finish in-flight requests',
      run: () => {
        parts.stopAccepting();
        return closeServer(server);
      },
    },
    { name: parts.releasing, run: parts.release },
  ];
  return {
    server,
    port,
    shutdownSteps,
    async close() {
      for (const step of shutdownSteps) await step.run();
    },
  };
}
