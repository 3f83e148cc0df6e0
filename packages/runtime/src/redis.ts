/**
 * One factory for every Redis connection, so each role gets the options it needs:
 * - `worker`: BullMQ workers block on Redis and must survive reconnects, so commands wait
 *   (maxRetriesPerRequest: null) instead of failing.
 * - `hot-path`: the intake answers 503 when Redis is away rather than buffering calls in memory,
 *   so nothing is queued offline and a command fails fast.
 * - `control`: config polling and admin work; ordinary retries, bounded.
 */
import { Redis, type ChainableCommander, type RedisOptions } from 'ioredis';
import { Counter, type Registry } from 'prom-client';
import { startAtZero } from './metrics.js';

export type RedisRole = 'worker' | 'hot-path' | 'control';

function redisOptions(role: RedisRole): RedisOptions {
  const common: RedisOptions = {
    // Reconnect forever, backing off to 2 s: Redis coming back must heal every process.
    retryStrategy: (times) => Math.min(times * 100, 2000),
    connectTimeout: 5000,
    lazyConnect: false,
    // CLIENT SETINFO fails on Redis before 7.2 (Debian 12 ships 7.0): two errors per connect,
    // counted in eventrelay_redis_errors_total, for a label in CLIENT LIST we do not need.
    disableClientInfo: true,
  };
  switch (role) {
    case 'worker':
      return { ...common, maxRetriesPerRequest: null, enableReadyCheck: true };
    case 'hot-path':
      return { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 2000 };
    case 'control':
      return { ...common, maxRetriesPerRequest: 2, commandTimeout: 5000 };
  }
}

/**
 * `registry`, when given, gets eventrelay_redis_errors_total for this connection: `kind="connection"`
 * for each failed or dropped connection, `kind="command"` for each command answered with an error
 * or cut off.
 */
export function createRedis(url: string, role: RedisRole, name: string, registry?: Registry): Redis {
  const client = new Redis(url, { ...redisOptions(role), connectionName: name });
  const errors = registry
    ? startAtZero(redisErrors(registry), [
        { connection: name, kind: 'connection' },
        { connection: name, kind: 'command' },
      ])
    : undefined;
  // ioredis emits 'error' on every failed reconnect; without a listener Node would crash the process.
  client.on('error', () => errors?.inc({ connection: name, kind: 'connection' }));
  if (errors) {
    // Every command, pipelined or not, passes through sendCommand; a command resent after a
    // reconnect passes again and is counted once.
    const send = client.sendCommand.bind(client);
    const watched = new WeakSet<object>();
    client.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
      const [command] = args;
      if (!watched.has(command)) {
        watched.add(command);
        command.promise.catch(() => errors.inc({ connection: name, kind: 'command' }));
      }
      return send(...args);
    };
  }
  return client;
}

function redisErrors(registry: Registry): Counter<'connection' | 'kind'> {
  const name = 'eventrelay_redis_errors_total';
  return (
    (registry.getSingleMetric(name) as Counter<'connection' | 'kind'> | undefined) ??
    new Counter({
      name,
      help: 'Redis errors by connection and kind: connection (failed or dropped), command (answered an error or cut off)',
      labelNames: ['connection', 'kind'] as const,
      registers: [registry],
    })
  );
}

/** Quits gracefully, or drops the socket when Redis is not answering. */
export async function closeRedis(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  await client.quit().catch(() => client.disconnect());
}

/**
 * Resolves once the client is connected. Needed before the first command on a client without an
 * offline queue, which would otherwise fail instead of waiting for the connection.
 */
function whenReady(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new Error(`Redis was not ready within ${timeoutMs} ms (status ${client.status})`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}

/** How long start-up waits for Redis before giving up (a supervisor restarts the process). */
const REDIS_STARTUP_TIMEOUT_MS = 30_000;

/** Start-up's wait for every connection, saying so once when Redis is not there yet. */
export async function waitForRedis(connections: readonly Redis[], onWaiting?: () => void): Promise<void> {
  if (connections.some((c) => c.status !== 'ready')) onWaiting?.();
  await Promise.all(connections.map((c) => whenReady(c, REDIS_STARTUP_TIMEOUT_MS)));
}

/**
 * Runs a pipeline or MULTI and returns each command's value in order; the first command that
 * failed is thrown (ioredis reports errors per command rather than rejecting).
 */
export async function execAll(batch: ChainableCommander): Promise<unknown[]> {
  const results = await batch.exec();
  if (!results) throw new Error('redis: the transaction was aborted');
  return results.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}

/**
 * Makes a Lua script callable as `redis[name](numKeys, ...keysAndArgs)`, and on the pipelines and
 * MULTIs made from `redis` afterwards (ioredis sends EVALSHA, loading the script when Redis lacks
 * it). Defining it again on the same connection is a no-op, so every store can define what it
 * uses.
 */
export function defineScript(redis: Redis, name: string, lua: string): void {
  if (typeof (redis as unknown as Record<string, unknown>)[name] !== 'function') redis.defineCommand(name, { lua });
}
