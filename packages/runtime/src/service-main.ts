/**
 * What every service's `src/index.ts` does: load the env (which names any bad variable), build the
 * logger and metrics registry, install the shutdown signals before start-up (so a signal while
 * waiting for Redis exits at once), start, and on a start-up failure print one line and exit 1.
 */
import { ConfigError } from '@eventrelay/config';
import { createLogger, type Logger } from './logger.js';
import { createMetricsRegistry, type Registry } from './metrics.js';
import { onShutdownSignal, type ShutdownStep } from './shutdown.js';

export interface ServiceMain<Env extends { readonly LOG_LEVEL: string }> {
  /** The service's name in logs, metrics and the start-up error. */
  readonly name: string;
  readonly loadEnv: () => Env;
  readonly start: (env: Env, deps: { logger: Logger; registry: Registry }) => Promise<{ readonly shutdownSteps: readonly ShutdownStep[] }>;
  /** How long one shutdown step may take (default 10 s). */
  readonly stepTimeoutMs?: (env: Env) => number;
}

export function runServiceMain<Env extends { readonly LOG_LEVEL: string }>(service: ServiceMain<Env>): void {
  const main = async () => {
    const env = service.loadEnv();
    const logger = createLogger(service.name, env.LOG_LEVEL);
    let steps: readonly ShutdownStep[] = [];
    onShutdownSignal(() => steps, logger, service.stepTimeoutMs ? { stepTimeoutMs: service.stepTimeoutMs(env) } : {});
    steps = (await service.start(env, { logger, registry: createMetricsRegistry(service.name) })).shutdownSteps;
  };
  main().catch((err: unknown) => {
    const message = err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
    process.stderr.write(`${service.name}: cannot start: ${message}\n`);
    process.exit(1);
  });
}
