/** Composition root: env → logger and metrics → start → shutdown on signals (runServiceMain). */
import { runServiceMain } from '@eventrelay/runtime';
import { loadEnv } from './env.js';
import { startDelivery } from './service.js';

runServiceMain({
  name: 'webhook-delivery',
  loadEnv: () => loadEnv(process.env),
  start: startDelivery,
  // Active attempts may take up to DELIVERY_TIMEOUT_MS to finish: give the step that waits for them that long.
  stepTimeoutMs: (env) => env.DELIVERY_TIMEOUT_MS + 5000,
});
