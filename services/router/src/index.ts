/** Composition root: env → logger and metrics → start → shutdown on signals. */
import { ConfigError } from '@eventrelay/config';
import { createLogger, createMetricsRegistry, onShutdownSignal, type ShutdownStep } from '@eventrelay/runtime';
import { loadEnv } from './env.js';
import { startRouter } from './service.js';

async function main(): Promise<void> {
  const env = loadEnv(process.env);
  const logger = createLogger('router', env.LOG_LEVEL);
  let steps: readonly ShutdownStep[] = [];
  onShutdownSignal(() => steps, logger);
  steps = (await startRouter(env, { logger, registry: createMetricsRegistry('router') })).shutdownSteps;
}

main().catch((err: unknown) => {
  const message = err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`router: cannot start: ${message}\n`);
  process.exit(1);
});
