/**
 * The life of an HTTP service (ingest, admin) once its handler is built: listen, log
 * `<name>.listening`, and shut down in order on request: stop accepting (readiness fails, in-flight
 * requests finish) → release queues, caches and Redis.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
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
}

export interface RunningHttpService {
  readonly server: Server;
  readonly port: number;
  readonly shutdownSteps: ShutdownStep[];
  close(): Promise<void>;
}

export async function serveHttp(parts: HttpServiceParts): Promise<RunningHttpService> {
  const server = createServer(parts.handler);
  // Longer than common load balancer idle timeouts, so the balancer closes first; and a bound on
  // how long a slow client may take to send its request.
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 30_000;
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
