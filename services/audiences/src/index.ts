/** Composition root: env → logger and metrics → start → shutdown on signals (runServiceMain). */
import { runServiceMain } from '@eventrelay/runtime';
import { loadEnv } from './env.js';
import { startAudiences } from './service.js';

runServiceMain({ name: 'audiences', loadEnv: () => loadEnv(process.env), start: startAudiences });
