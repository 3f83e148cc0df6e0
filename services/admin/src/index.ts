/** Composition root: env → logger and metrics → start → shutdown on signals (runServiceMain). */
import { runServiceMain } from '@eventrelay/runtime';
import { loadEnv } from './env.js';
import { startAdmin } from './service.js';

runServiceMain({ name: 'admin', loadEnv: () => loadEnv(process.env), start: startAdmin });
