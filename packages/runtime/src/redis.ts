/**
 * One factory for every Redis connection, so each role gets the options it needs:
 * - `worker`: BullMQ workers block on Redis and must survive reconnects, so commands wait
 *   (maxRetriesPerRequest: null) instead of failing.
 * - `hot-path`: the intake answers 503 when Redis is away rather than buffering calls in memory,
 *   so nothing is queued offline and a command fails fast.
 * - `control`: config polling and admin work; ordinary retries, bounded.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, DEFAULT_SENTINEL_NAME, type SentinelAddress } from '@eventrelay/config';
import { Cluster, Redis, type ChainableCommander, type ClusterOptions, type RedisOptions } from 'ioredis';
import { Counter, type Registry } from 'prom-client';
import { startAtZero } from './metrics.js';
import { isRedisFull } from './domain/redis-full.js';

/**
 * Where every connection of a process goes: the common variables (docs/reference/env.md). The
 * credentials (ACL user and password) are in the URL; rediss:// turns TLS on, verified against
 * Node's CAs or, when set, the CA file. With Sentinels the primary is whichever they name, and
 * REDIS_URL gives only the credentials, the database and the scheme.
 */
export interface RedisEnv {
  readonly REDIS_URL: string;
  /** Checked by the env parser (it exists and holds a certificate). */
  readonly REDIS_TLS_CA_FILE?: string | undefined;
  readonly REDIS_SENTINELS?: readonly SentinelAddress[] | undefined;
  readonly REDIS_SENTINEL_NAME?: string | undefined;
  readonly REDIS_SENTINEL_PASSWORD?: string | undefined;
  readonly REDIS_CLUSTER_NODES?: readonly SentinelAddress[] | undefined;
}

/** A connection: to one Redis (standalone, or the primary Sentinels name), or to a Redis Cluster. */
export type RedisClient = Redis | Cluster;

const caFiles = new Map<string, string>();

function tlsOptions(env: RedisEnv): Pick<RedisOptions, 'tls'> {
  if (!env.REDIS_TLS_CA_FILE || !env.REDIS_URL.startsWith('rediss:')) return {};
  const path = env.REDIS_TLS_CA_FILE;
  let ca = caFiles.get(path);
  if (ca === undefined) {
    ca = readFileSync(path, 'utf8');
    caFiles.set(path, ca);
  }
  return { tls: { ca } };
}

/**
 * The options that say where to connect when Sentinels are given: the primary they name, with the
 * URL's credentials and database. A connection asks the Sentinels again whenever it reconnects:
 * when the old primary died, or (READONLY, see reconnectOnError) was turned into a replica.
 * ioredis's `failoverDetector` is not used: when its announcement of a new primary arrives while a
 * connection is already reconnecting, that connection ends for good (ioredis 5.11, seen in
 * test/e2e/redis-failover.test.ts: every later command failed with "Connection is closed.").
 */
function sentinelOptions(env: RedisEnv, sentinels: readonly SentinelAddress[]): RedisOptions {
  const url = new URL(env.REDIS_URL);
  const tls = url.protocol === 'rediss:';
  const tlsConfig = tlsOptions(env).tls ?? {};
  return {
    sentinels: sentinels.map((s) => ({ host: s.host, port: s.port })),
    name: env.REDIS_SENTINEL_NAME ?? DEFAULT_SENTINEL_NAME,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(env.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: env.REDIS_SENTINEL_PASSWORD } : {}),
    db: Number(url.pathname.slice(1) || 0),
    ...(tls ? { tls: tlsConfig, enableTLSForSentinelMode: true, sentinelTLS: tlsConfig } : {}),
  };
}

/**
 * The options of a cluster client: the role's options and the URL's credentials and TLS for every
 * node connection. Replicas are not read from (scaleReads master): a worker must see its own writes.
 */
function clusterOptions(env: RedisEnv, role: RedisRole, name: string): ClusterOptions {
  const url = new URL(env.REDIS_URL);
  const node = redisOptions(role);
  const tls = url.protocol === 'rediss:' ? { tls: tlsOptions(env).tls ?? {} } : {};
  return {
    scaleReads: 'master',
    // A hot-path command fails at once while the cluster has no connection (answered 503).
    enableOfflineQueue: role !== 'hot-path',
    clusterRetryStrategy: (times) => Math.min(times * 100, 2000),
    // MOVED/ASK and TRYAGAIN during a failover or a reshard: follow them, then give up the command.
    maxRedirections: 16,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 200,
    slotsRefreshTimeout: 2000,
    redisOptions: {
      ...node,
      // A node turned replica answers READONLY: the cluster client refreshes the slot map itself.
      reconnectOnError: undefined,
      connectionName: name,
      ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
      ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
      ...tls,
    },
  };
}

/** The nodes each cluster client was given, for messages. */
const clusterSeeds = new WeakMap<Cluster, string>();

/** Where a client connects, for messages: host:port, the primary and the Sentinels asked for it, or the cluster. */
function describeTarget(client: RedisClient): string {
  if (client instanceof Cluster) return `the Redis Cluster at ${clusterSeeds.get(client) ?? '?'} (REDIS_CLUSTER_NODES)`;
  const { host, port, sentinels, name } = client.options;
  if (sentinels && sentinels.length > 0)
    return `the primary "${name}" of the Sentinels ${sentinels.map((s) => `${s.host}:${s.port}`).join(',')} (REDIS_SENTINELS)`;
  return `${host}:${port}`;
}

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
    // A primary turned replica (a failover behind a fixed address) answers writes with READONLY:
    // reconnect, which finds the new primary, and send the command again.
    reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
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
 * for each failed or dropped connection, `kind="oom"` for each command Redis refused for lack of
 * memory (at `maxmemory`: a MULTI counts each command it queued), `kind="command"` for each other
 * command answered with an error or cut off.
 */
export function createRedis(target: string | RedisEnv, role: RedisRole, name: string, registry?: Registry): RedisClient {
  const env: RedisEnv = typeof target === 'string' ? { REDIS_URL: target } : target;
  // BullMQ duplicates a connection for its blocking commands; duplicate() keeps these options.
  const sentinels = env.REDIS_SENTINELS ?? [];
  const cluster = env.REDIS_CLUSTER_NODES ?? [];
  const client: RedisClient =
    cluster.length > 0
      ? new Cluster(
          cluster.map((n) => ({ host: n.host, port: n.port })),
          clusterOptions(env, role, name),
        )
      : sentinels.length > 0
        ? new Redis({ ...redisOptions(role), ...sentinelOptions(env, sentinels), connectionName: name })
        : new Redis(env.REDIS_URL, { ...redisOptions(role), ...tlsOptions(env), connectionName: name });
  if (client instanceof Cluster) clusterSeeds.set(client, cluster.map((n) => `${n.host}:${n.port}`).join(','));
  const errors = registry
    ? startAtZero(redisErrors(registry), [
        { connection: name, kind: 'connection' },
        { connection: name, kind: 'command' },
        { connection: name, kind: 'oom' },
      ])
    : undefined;
  // ioredis emits 'error' on every failed reconnect; without a listener Node would crash the process.
  client.on('error', () => errors?.inc({ connection: name, kind: 'connection' }));
  if (errors) {
    // Every command, pipelined or not, passes through sendCommand; a command resent after a
    // reconnect passes again and is counted once.
    const send = client.sendCommand.bind(client);
    const watched = new WeakSet<object>();
    (client as Redis).sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
      const [command] = args;
      if (!watched.has(command)) {
        watched.add(command);
        command.promise.catch((err: unknown) => errors.inc({ connection: name, kind: isRedisFull(err) ? 'oom' : 'command' }));
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
      help: 'Redis errors by connection and kind: connection (failed or dropped), oom (a write refused at maxmemory), command (any other error answered, or cut off)',
      labelNames: ['connection', 'kind'] as const,
      registers: [registry],
    })
  );
}

/** Quits gracefully, or drops the socket when Redis is not answering. */
export async function closeRedis(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  await client.quit().catch(() => client.disconnect());
}

/**
 * Why a connection attempt failed, when trying again cannot help: Redis refused the credentials of
 * REDIS_URL, or the TLS certificate did not verify. Undefined for everything else (Redis down,
 * loading, a network cut), which start-up waits out.
 */
function fatalRedisError(err: unknown): string | undefined {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | undefined)?.code;
  if (/\bWRONGPASS\b|invalid (username-)?password/i.test(message))
    return `REDIS_URL: Redis refused its user and password (${message.replace(/^Ready check failed: /, '')}); set the ACL user and password in REDIS_URL (redis://user:password@host:port)`;
  if (/\bNOAUTH\b/.test(message))
    return 'REDIS_URL: Redis requires a password and REDIS_URL has none (NOAUTH); set it in REDIS_URL (redis://user:password@host:port)';
  if (/\bNOPERM\b/.test(message))
    return `REDIS_URL: the ACL user of REDIS_URL lacks a permission eventrelay needs (${message.replace(/^Ready check failed: /, '')}); see the Redis ACL in docs/deployment.md`;
  if (typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_(VERIFY|GET_ISSUER)|ERR_TLS_CERT_ALTNAME_INVALID/.test(code))
    return `REDIS_URL: the TLS certificate of Redis did not verify (${code}: ${message}); give the CA that signed it in REDIS_TLS_CA_FILE, and a host in REDIS_URL that the certificate names`;
  return undefined;
}

/**
 * Resolves once the client is connected. Needed before the first command on a client without an
 * offline queue, which would otherwise fail instead of waiting for the connection. Rejects at once
 * with a ConfigError when the failure is one no retry can cure (fatalRedisError).
 */
function whenReady(client: RedisClient, timeoutMs: number, cancelled: Promise<void>): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    let lastError: string | undefined;
    const done = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
    };
    const timer = setTimeout(() => {
      done();
      reject(
        new ConfigError(
          'invalid_env',
          `REDIS_URL: Redis at ${describeTarget(client)} was not ready within ${timeoutMs} ms (status ${client.status}${lastError ? `, last error: ${lastError}` : ''})`,
        ),
      );
    }, timeoutMs);
    const onReady = () => {
      done();
      resolve();
    };
    const onError = (err: unknown) => {
      lastError = err instanceof Error ? err.message : String(err);
      const fatal = fatalRedisError(err);
      if (fatal === undefined) return;
      done();
      // Stop reconnecting: the process is about to exit, and a retry loop would only repeat this.
      client.disconnect();
      reject(new ConfigError('invalid_env', fatal, { cause: err }));
    };
    client.once('ready', onReady);
    client.on('error', onError);
    void cancelled.then(done);
  });
}

/** How long start-up waits for Redis before giving up (a supervisor restarts the process). */
const REDIS_STARTUP_TIMEOUT_MS = 30_000;

/**
 * Start-up's wait for every connection, saying so once when Redis is not there yet. Redis away is
 * waited for (up to 30 s); refused credentials or an unverifiable certificate fail at once, naming
 * REDIS_URL.
 */
export async function waitForRedis(connections: readonly RedisClient[], onWaiting?: () => void): Promise<void> {
  if (connections.some((c) => c.status !== 'ready')) onWaiting?.();
  // The first failure ends the wait for every connection (no timer left behind).
  let cancel = () => {};
  const cancelled = new Promise<void>((resolve) => (cancel = resolve));
  try {
    await Promise.all(connections.map((c) => whenReady(c, REDIS_STARTUP_TIMEOUT_MS, cancelled)));
  } finally {
    cancel();
  }
}

/**
 * Runs a pipeline or MULTI and returns each command's value in order; the first command that
 * failed is thrown (ioredis reports errors per command rather than rejecting).
 */
export async function execAll(batch: ChainableCommander): Promise<unknown[]> {
  const redis = (batch as { redis?: RedisClient }).redis;
  if (redis && scriptsInDoubt.has(redis)) await reloadScripts(redis);
  let results: Awaited<ReturnType<ChainableCommander['exec']>>;
  try {
    results = await batch.exec();
  } catch (err) {
    if (redis && err instanceof Error && err.message.startsWith('EXECABORT')) scriptsInDoubt.add(redis);
    throw err;
  }
  if (!results) throw new Error('redis: the transaction was aborted');
  return results.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}

/**
 * Connections whose scripts are being loaded again. ioredis sends a script's first use on a
 * connection as EVAL and its later uses as EVALSHA, taking the script as loaded once EVAL was
 * written. In a MULTI that Redis discards (EXECABORT: a command refused while queued, as every
 * write is when Redis is full) the EVAL never ran, so the script is not loaded, and ioredis does not
 * notice it inside a MULTI: every later MULTI using it gets NOSCRIPT for that command while the
 * other commands run (a commit half made). So after an aborted MULTI every script of the connection
 * is loaded again (SCRIPT LOAD is not refused when Redis is full) before its next MULTI runs.
 */
const scriptsInDoubt = new WeakSet<RedisClient>();
const scriptsLoading = new WeakMap<RedisClient, Promise<void>>();

/** Loads every script of a connection in doubt; throws when Redis does not answer (in doubt still). */
async function reloadScripts(redis: RedisClient): Promise<void> {
  let loading = scriptsLoading.get(redis);
  if (!loading) {
    const scripts = Object.values((redis as unknown as { scriptsSet?: Record<string, { lua: string }> }).scriptsSet ?? {});
    const nodes: Redis[] = redis instanceof Cluster ? redis.nodes('master') : [redis];
    loading = Promise.all(nodes.flatMap((node) => scripts.map((script) => node.script('LOAD', script.lua))))
      .then(() => void scriptsInDoubt.delete(redis))
      .finally(() => scriptsLoading.delete(redis));
    scriptsLoading.set(redis, loading);
  }
  await loading;
}

/**
 * Makes a Lua script callable as `redis[name](numKeys, ...keysAndArgs)`, and on the pipelines and
 * MULTIs made from `redis` afterwards (ioredis sends EVALSHA, loading the script when Redis lacks
 * it). Defining it again on the same connection is a no-op, so every store can define what it
 * uses.
 */
export function defineScript(redis: RedisClient, name: string, lua: string): void {
  if (typeof (redis as unknown as Record<string, unknown>)[name] !== 'function') redis.defineCommand(name, { lua });
}
