export { REPO_ROOT, hostEnv, hostEnvironment } from './env.js';
export { eventually, sleep } from './eventually.js';
export {
  freePort,
  killAll,
  probe,
  runToExit,
  spawnChild,
  startChild,
  waitForOk,
  type ChildHandle,
  type ChildOptions,
  type Exit,
} from './process.js';
export {
  REDIS_INSTALL_HINT,
  SHARED_REDIS_URL,
  deletePrefix,
  ensureRedis,
  pingRedis,
  startPrivateRedis,
  uniquePrefix,
  type EnsureRedisOptions,
  type EnsuredRedis,
  type PrivateRedis,
  type PrivateRedisOptions,
} from './redis.js';
export {
  SERVICE_NAMES,
  SERVICE_NODE_FLAGS,
  SERVICE_PORT_VARIABLE,
  STACK_ADMIN_TOKEN,
  buildServices,
  distEntry,
  runServiceToExit,
  startService,
  startStack,
  type ServiceName,
  type ServiceOptions,
  type ServiceProcess,
  type Stack,
  type StackOptions,
} from './services.js';
export { startReceiver, type ReceivedRequest, type Receiver, type ReceiverOptions, type Reply, type Responder } from './receiver.js';
export {
  METADATA_URL,
  chaosReply,
  routeRandom,
  selfSignedCert,
  startChaosReceiver,
  type Arrival,
  type Behaviour,
  type ChaosPlan,
  type ChaosReceiver,
} from './chaos.js';
export { IpcClient, serveIpc, startChaosProcess, type ChaosProcess } from './chaos-process.js';
