/** Composition root: env → logger and metrics → start → shutdown on signals. */
import { ConfigError } from '@eventrelay/config';
import { createLogger, createMetricsRegistry, onShutdownSignal, type ShutdownStep } from '@eventrelay/runtime';
import { loadEnv } from './env.js';
import { startAdmin } from './service.js';

async function main(): Promise<void> {
  const env = loadEnv(process.env);
  const logger = createLogger('admin', env.LOG_LEVEL);
  let steps: readonly ShutdownStep[] = [];
  onShutdownSignal(() => steps, logger);
  steps = (await startAdmin(env, { logger, registry: createMetricsRegistry('admin') })).shutdownSteps;
}

main().catch((err: unknown) => {
  const message = err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`admin: cannot start: ${message}\n`);
  process.exit(1);
});
