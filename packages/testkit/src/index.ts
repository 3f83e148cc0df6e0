export { REPO_ROOT } from './env.js';
export { CHROMIUM_FLAGS, CHROMIUM_PATH } from './chromium.js';
export { eventually, sleep } from './eventually.js';
export { freePort, killAll, probe, spawnChild, startChild, waitForOk, type ChildHandle } from './process.js';
export {
  SHARED_REDIS_URL,
  deletePrefix,
  ensureRedis,
  startPrivateRedis,
  startReplicatedRedis,
  uniquePrefix,
  type PrivateRedis,
  type ReplicatedRedis,
} from './redis.js';
export { startRedisCluster, type ClusterNode, type LocalRedisCluster } from './redis-cluster.js';
export {
  SERVICE_NODE_FLAGS,
  buildServices,
  distEntry,
  runServiceToExit,
  startService,
  startStack,
  type ServiceName,
  type ServiceProcess,
} from './services.js';
export { startReceiver, type ReceivedRequest, type Receiver } from './receiver.js';
export {
  METADATA_URL,
  TokenBucket,
  chaosReply,
  routeRandom,
  startChaosReceiver,
  type Arrival,
  type Behaviour,
  type ChaosPlan,
  type ChaosReceiver,
} from './chaos.js';
export { IpcClient, serveIpc, startChaosProcess, type ChaosProcess } from './chaos-process.js';
