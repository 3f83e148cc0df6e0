/**
 * Redis for tests, benches and the quick start: the shared server (REDIS_URL, default
 * 127.0.0.1:6379) with a unique key prefix per user, or a private redis-server of the caller's own
 * on a free port for runs that stop, kill or measure Redis.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { DEFAULT_SENTINEL_NAME } from '@eventrelay/config';
import { hostEnv } from './env.js';
import { eventually } from './eventually.js';
import { freePort, startChild, type ChildHandle } from './process.js';

/** REDIS_URL, or the local default. */
export const SHARED_REDIS_URL = hostEnv('REDIS_URL') ?? 'redis://127.0.0.1:6379';

/** A run-unique, hash-tagged prefix (`{t-<label>-<hex>}`), as a Redis Cluster deployment would use. */
export function uniquePrefix(label: string): string {
  return `{t-${label}-${randomBytes(4).toString('hex')}}`;
}

/**
 * SCAN + UNLINK every key under `prefix` (its `prefix:…` keys; a hash-tagged prefix ends in `}`, so
 * no other prefix can start with it). Takes a URL (a connection of its own) or a client. Returns
 * how many keys went.
 */
export async function deletePrefix(target: string | Redis, prefix: string): Promise<number> {
  const client = typeof target === 'string' ? new Redis(target, { maxRetriesPerRequest: 1 }) : target;
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await client.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    if (typeof target === 'string') client.disconnect();
  }
  return deleted;
}

/**
 * True when a Redis answers PING at `url` (an auth-protected one answering NOAUTH counts as up).
 * A rediss:// URL is probed over TLS without checking the certificate (the probe only asks "up?").
 */
function pingRedis(url: string, timeoutMs = 500): Promise<boolean> {
  const { hostname, port, protocol } = new URL(url);
  return new Promise((resolve) => {
    const at = { port: Number(port || 6379), host: hostname || '127.0.0.1' };
    const socket = protocol === 'rediss:' ? tls.connect({ ...at, rejectUnauthorized: false }) : net.connect(at);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once(protocol === 'rediss:' ? 'secureConnect' : 'connect', () => socket.write('PING\r\n'));
    socket.once('data', (d: Buffer) => done(/^(\+PONG|-NOAUTH|-ERR.*auth)/i.test(d.toString())));
  });
}

export interface PrivateRedisOptions {
  /**
   * Append-only file: `always` (the default: fsync on every write, so what it acknowledged survives
   * a SIGKILL as it would in production), `everysec`, or false (no persistence at all).
   */
  readonly aof?: 'always' | 'everysec' | false;
  /** Where the AOF goes; a fresh temporary folder by default. */
  readonly dir?: string;
  /** A free one by default. */
  readonly port?: number;
  /** Write redis-server's log to this file (default: nowhere). */
  readonly logFile?: string;
  /**
   * TLS only (`--tls-port`, `--port 0`, clients not asked for a certificate): `url` is then
   * rediss://127.0.0.1:<port>. The files are PEM.
   */
  readonly tls?: { readonly certFile: string; readonly keyFile: string; readonly caFile: string };
  /** More redis-server arguments, e.g. `['--requirepass', pw]` or `['--user', 'name', 'on', '>pw', '~*', '+@all']`. */
  readonly args?: readonly string[];
}

export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** The running redis-server, or undefined while stopped. */
  process(): ChildHandle | undefined;
  /** Starts it again on the same port and folder (a no-op while it runs). */
  start(): Promise<void>;
  /** SIGKILL, as a crash would (no shutdown save): waits for the exit. */
  stop(): Promise<void>;
  /** SIGTERM (Redis's own shutdown), waits for the exit. */
  close(): Promise<void>;
}

/** A redis-server of the caller's own (never the shared one) from PATH, ready when it answers PING. */
export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const port = options.port ?? (await freePort());
  const url = `${options.tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`;
  const listen = options.tls
    ? [
        ...['--port', '0', '--tls-port', String(port), '--tls-cert-file', options.tls.certFile, '--tls-key-file', options.tls.keyFile],
        ...['--tls-ca-cert-file', options.tls.caFile, '--tls-auth-clients', 'no'],
      ]
    : ['--port', String(port)];
  const aof = options.aof ?? 'always';
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'eventrelay-redis-'));
  mkdirSync(dir, { recursive: true });
  const persistence = aof === false ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', aof];
  let handle: ChildHandle | undefined;
  const start = async () => {
    if (handle?.running()) return;
    handle = await startChild({
      name: 'redis-server',
      command: 'redis-server',
      args: [
        ...listen,
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        ...persistence,
        '--dir',
        dir,
        '--loglevel',
        'warning',
        '--logfile',
        options.logFile ?? '/dev/null',
        ...(options.args ?? []),
      ],
      cwd: dir,
      ready: () => pingRedis(url),
      readyTimeoutMs: 10_000,
    });
  };
  const stopWith = async (signal: NodeJS.Signals) => {
    const h = handle;
    handle = undefined;
    if (h) await h.stop(signal, 10_000);
  };
  await start();
  return { url, port, dir, process: () => handle, start, stop: () => stopWith('SIGKILL'), close: () => stopWith('SIGTERM') };
}

export interface EnsuredRedis {
  readonly url: string;
  /** The redis-server started for the caller, when nothing answered at the URL. */
  readonly started: PrivateRedis | undefined;
  /** Stops the redis-server started for the caller (nothing otherwise). */
  close(): Promise<void>;
}

export interface EnsureRedisOptions {
  /** Default REDIS_URL, else redis://127.0.0.1:6379. */
  readonly url?: string;
  /** Start the missing Redis on the URL's own port (the quick start) rather than on a free one (the default). */
  readonly onUrlPort?: boolean;
  /** Persistence of a started server (default none). */
  readonly aof?: PrivateRedisOptions['aof'];
  readonly dir?: string;
  readonly logFile?: string;
}

const REDIS_INSTALL_HINT =
  'install redis-server (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis) or point REDIS_URL at a running Redis 6.2+';

/**
 * A Redis to use: the one at REDIS_URL when it answers; else, when that URL is on this machine, a
 * redis-server from PATH started for the caller (close() stops it); else an error that says how to
 * get one.
 */
export async function ensureRedis(options: EnsureRedisOptions = {}): Promise<EnsuredRedis> {
  const url = options.url ?? SHARED_REDIS_URL;
  if (await pingRedis(url, 1000)) return { url, started: undefined, close: () => Promise.resolve() };
  const parsed = new URL(url);
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(parsed.hostname))
    throw new Error(`nothing answers at REDIS_URL=${url}: start that Redis, or ${REDIS_INSTALL_HINT}`);
  let started: PrivateRedis;
  try {
    started = await startPrivateRedis({
      aof: options.aof ?? false,
      ...(options.onUrlPort ? { port: Number(parsed.port || 6379) } : {}),
      ...(options.dir ? { dir: options.dir } : {}),
      ...(options.logFile ? { logFile: options.logFile } : {}),
    });
  } catch (err) {
    const reason = err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err);
    throw new Error(`no Redis answers at ${url} and redis-server could not be started (${reason}): ${REDIS_INSTALL_HINT}`, { cause: err });
  }
  return { url: started.url, started, close: () => started.close() };
}

/** A Sentinel of the caller's own (`redis-server --sentinel`), watching one primary. */
interface PrivateSentinel {
  readonly port: number;
  /** REDIS_SENTINELS for the processes: `127.0.0.1:<port>`. */
  readonly address: string;
  /** The primary's port as this Sentinel names it now (it changes with a failover). */
  primaryPort(): Promise<number | undefined>;
  close(): Promise<void>;
}

export interface ReplicatedRedis {
  /** The server started as the primary (after a failover, a replica or stopped). */
  readonly primary: PrivateRedis;
  /** The server started as its replica (after a failover, the primary). */
  readonly replica: PrivateRedis;
  /** Present when started with `sentinel: true`. */
  readonly sentinel: PrivateSentinel | undefined;
  /** The name the Sentinel monitors the primary under (REDIS_SENTINEL_NAME). */
  readonly name: string;
  /** Stops the Sentinel, then both servers, and deletes their folders. */
  close(): Promise<void>;
}

export interface ReplicatedRedisOptions {
  /** Persistence of both servers (see PrivateRedisOptions; default none). */
  readonly aof?: PrivateRedisOptions['aof'];
  /** A Sentinel (quorum 1, a primary is down after `downAfterMs` without answers) that fails over on its own. */
  readonly sentinel?: boolean;
  readonly downAfterMs?: number;
  readonly name?: string;
}

/**
 * Runs `use` on a connection of its own to the redis-server (or Sentinel) on `port`, closed after;
 * `fallback` when it cannot connect or `use` fails: the probes below are polled until they pass.
 */
async function probe<T>(port: number, fallback: T, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await client.connect();
    return await use(client);
  } catch {
    return fallback;
  } finally {
    client.disconnect();
  }
}

/** Polls `check` every 100 ms until it is true, else fails saying `what` after `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  await eventually(
    async () => {
      if (!(await check())) throw new Error(`${what} within ${timeoutMs} ms`);
    },
    timeoutMs,
    100,
  );
}

/**
 * A primary and one replica of the caller's own (never the shared Redis), the replica in sync
 * before this resolves; with `sentinel`, one Sentinel watching them that promotes the replica when
 * the primary stops answering. One Sentinel with quorum 1 is enough for a test; a deployment runs
 * three (docs/deployment.md).
 */
export async function startReplicatedRedis(options: ReplicatedRedisOptions = {}): Promise<ReplicatedRedis> {
  const name = options.name ?? DEFAULT_SENTINEL_NAME;
  const aof = options.aof ?? false;
  // A replica's full sync starts at once, not after Redis's default 5 s wait for more replicas to
  // share the transfer: a test has one replica, and measures the failover, not that wait.
  const sync = ['--repl-diskless-sync-delay', '0'];
  const primary = await startPrivateRedis({ aof, args: sync });
  let replica: PrivateRedis | undefined;
  let sentinel: PrivateSentinel | undefined;
  try {
    replica = await startPrivateRedis({ aof, args: [...sync, '--replicaof', '127.0.0.1', String(primary.port)] });
    const replicaPort = replica.port;
    const linkUp = (client: Redis) => client.info('replication').then((info) => /^master_link_status:up\s*$/m.test(info));
    await until('the replica was not in sync', () => probe(replicaPort, false, linkUp), 10_000);
    // Link up is not yet acknowledging: for a moment after its sync a replica confirms nothing, and a
    // WAIT would time out. In sync means a write it confirms.
    const confirmsWrite = async (client: Redis) => (await client.set('testkit:replication-probe', '1'), (await client.wait(1, 200)) >= 1);
    await until('the replica did not confirm a write', () => probe(primary.port, false, confirmsWrite), 10_000);
    if (options.sentinel) sentinel = await startSentinel(name, primary.port, options.downAfterMs ?? 1000);
  } catch (err) {
    await replica?.close();
    await primary.close();
    throw err;
  }
  const started = replica;
  return {
    primary,
    replica: started,
    sentinel,
    name,
    async close() {
      await sentinel?.close();
      await Promise.all([started.close(), primary.close()]);
      for (const r of [started, primary]) rmSync(r.dir, { recursive: true, force: true });
    },
  };
}

async function startSentinel(name: string, primaryPort: number, downAfterMs: number): Promise<PrivateSentinel> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-sentinel-'));
  const conf = path.join(dir, 'sentinel.conf');
  // Sentinel rewrites its file as it learns the topology, so the file is its own, in its own folder.
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 1`,
      `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
      `sentinel failover-timeout ${name} ${Math.max(3000, downAfterMs * 3)}`,
      `sentinel parallel-syncs ${name} 1`,
      '',
    ].join('\n'),
  );
  const ask = (...args: string[]): Promise<unknown> => probe<unknown>(port, undefined, (c) => c.call('SENTINEL', ...args));
  const handle = await startChild({
    name: 'redis-sentinel',
    command: 'redis-server',
    args: [conf, '--sentinel', '--loglevel', 'warning', '--logfile', path.join(dir, 'sentinel.log')],
    cwd: dir,
    ready: async () => Array.isArray(await ask('get-master-addr-by-name', name)),
    readyTimeoutMs: 10_000,
  });
  // A failover needs a replica the Sentinel knows of: it learns them from the primary's INFO.
  await until(
    'the Sentinel did not see the replica',
    async () => {
      const replicas = await ask('replicas', name);
      return Array.isArray(replicas) && replicas.length > 0;
    },
    15_000,
  );
  return {
    port,
    address: `127.0.0.1:${port}`,
    async primaryPort() {
      const answer = await ask('get-master-addr-by-name', name);
      return Array.isArray(answer) ? Number(answer[1]) : undefined;
    },
    async close() {
      await handle.stop('SIGTERM', 5000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
