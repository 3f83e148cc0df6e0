/** Composition root: env → logger and metrics → start → shutdown on signals. */
import { ConfigError } from '@eventrelay/config';
import { createLogger, createMetricsRegistry, onShutdownSignal, type ShutdownStep } from '@eventrelay/runtime';
import { loadEnv } from './env.js';
import { startDelivery } from './service.js';

async function main(): Promise<void> {
  const env = loadEnv(process.env);
  const logger = createLogger('webhook-delivery', env.LOG_LEVEL);
  let steps: readonly ShutdownStep[] = [];
  // Active attempts may take up to DELIVERY_TIMEOUT_MS to finish: give the step that waits for them that long.
  onShutdownSignal(() => steps, logger, { stepTimeoutMs: env.DELIVERY_TIMEOUT_MS + 5000 });
  steps = (await startDelivery(env, { logger, registry: createMetricsRegistry('webhook-delivery') })).shutdownSteps;
}

main().catch((err: unknown) => {
  const message = err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`webhook-delivery: cannot start: ${message}\n`);
  process.exit(1);
});
