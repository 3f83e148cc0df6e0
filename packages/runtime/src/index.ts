// The plumbing every service process shares: Redis connections per role, the logger, the metrics
// registry, the ops server, graceful shutdown, the two process shapes (HTTP service, queue worker)
// and the queue wiring. The shared Redis data (config, batches, logs) is in @eventrelay/stores.
export { inSlices } from './in-slices.js';
export { closeRedis, createRedis, type RedisClient, defineScript, execAll, waitForRedis } from './redis.js';
export type { Logger } from './logger.js';
export { Counter, Gauge, Histogram, LATENCY_BUCKETS, LabelTally, createMetricsRegistry, startAtZero, type Registry } from './metrics.js';
export { handleOps, shutdownGate, type OpsDeps } from './ops.js';
export type { ShutdownStep } from './shutdown.js';
export { runServiceMain } from './service-main.js';
export { serveHttp, type RunningHttpService } from './http-service.js';
export { runWorkerProcess, type RunningWorkerProcess } from './worker-process.js';
export { infoOfPrimaries, openQueue, openShardedQueue, pipelinesOn, queueJobAdd, replicaWaitOn, transactionsOn } from './queues.js';
export { openWorker } from './workers.js';
export { putJobBack, queueJobDataWrite, queueJobRewrite, readJobData, readQueues } from './queue-metrics.js';
