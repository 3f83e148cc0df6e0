export * from './redis.js';
export * from './logger.js';
export * from './metrics.js';
export * from './ops.js';
export * from './shutdown.js';
export * from './config-store.js';
export * from './queues.js';
