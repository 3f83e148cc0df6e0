/** Composition root: env → logger and metrics → start → shutdown on signals (runServiceMain). */
import { runServiceMain } from '@eventrelay/runtime';
import { loadEnv } from './env.js';
import { startRouter } from './service.js';

runServiceMain({ name: 'router', loadEnv: () => loadEnv(process.env), start: startRouter });
