/** Composition root: env → logger and metrics → start → shutdown on signals (runServiceMain). */
import { runServiceMain } from '@eventrelay/runtime';
import { loadEnv } from './env.js';
import { startIngest } from './service.js';

runServiceMain({ name: 'ingest', loadEnv: () => loadEnv(process.env), start: startIngest });
