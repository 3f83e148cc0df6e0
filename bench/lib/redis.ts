/** The little Redis the bench needs: delete a run's keys, read server counters around a phase, or run a private server. */
import net from 'node:net';
import { REPO_ROOT, requireFromIngest } from './deps.js';
import { freePort, startChild, type ChildHandle } from './proc.js';

/** The part of ioredis used here (ioredis's own types are not resolvable from bench/). */
interface MiniRedis {
  scan(cursor: string, match: 'MATCH', pattern: string, count: 'COUNT', n: number): Promise<[string, string[]]>;
  unlink(...keys: string[]): Promise<number>;
  info(section: string): Promise<string>;
  llen(key: string): Promise<number>;
  zcard(key: string): Promise<number>;
  quit(): Promise<unknown>;
  disconnect(): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

type RedisCtor = new (url: string, options: Record<string, unknown>) => MiniRedis;

export function connectRedis(url: string): MiniRedis {
  const { Redis } = requireFromIngest<{ Redis: RedisCtor }>('ioredis');
  const client = new Redis(url, { maxRetriesPerRequest: 1, connectionName: 'eventrelay-bench' });
  client.on('error', () => undefined);
  return client;
}

/** SCAN + UNLINK every key that starts with `prefix` (a run-unique, hash-tagged prefix). */
export async function deletePrefix(client: MiniRedis, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 2000);
    cursor = next;
    if (keys.length > 0) deleted += await client.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}

export interface CommandStat {
  calls: number;
  usec: number;
}

export interface RedisSnapshot {
  readonly cpuSeconds: number;
  readonly usedMemory: number;
  readonly commands: Map<string, CommandStat>;
  /** total_commands_processed (commands sent by clients; the ones Lua scripts run count in `commands` only). */
  readonly totalCommands: number;
  readonly version: string;
}

/** One `name:value` line of an INFO answer. */
export function infoField(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

export async function redisSnapshot(client: MiniRedis): Promise<RedisSnapshot> {
  const info = await client.info('all');
  const commands = new Map<string, CommandStat>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    commands.set(m[1] as string, { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return {
    cpuSeconds: Number(infoField(info, 'used_cpu_user') ?? 0) + Number(infoField(info, 'used_cpu_sys') ?? 0),
    usedMemory: Number(infoField(info, 'used_memory') ?? 0),
    commands,
    totalCommands: Number(infoField(info, 'total_commands_processed') ?? 0),
    version: infoField(info, 'redis_version') ?? 'unknown',
  };
}

export interface CommandDelta {
  command: string;
  calls: number;
  usec: number;
  usec_per_call: number;
}

/** Commands run between two snapshots, most Redis time first (whole server, not only this run). */
export function commandDeltas(before: RedisSnapshot, after: RedisSnapshot, top = 8): CommandDelta[] {
  const out: CommandDelta[] = [];
  for (const [command, stat] of after.commands) {
    const prev = before.commands.get(command) ?? { calls: 0, usec: 0 };
    const calls = stat.calls - prev.calls;
    const usec = stat.usec - prev.usec;
    if (calls > 0) out.push({ command, calls, usec, usec_per_call: Math.round((usec / calls) * 100) / 100 });
  }
  return out.sort((a, b) => b.usec - a.usec).slice(0, top);
}

export interface PrivateRedisOptions {
  /** Append-only file on (appendfsync everysec), in `dir`; off by default, like the shared server. */
  readonly aof?: boolean;
  readonly dir?: string;
  /** Reuse a port (a restart); a free one by default. */
  readonly port?: number;
}

/**
 * A redis-server of the bench's own on a free port, configured like the shared one (no RDB
 * snapshots, no AOF) unless `aof` is set, for runs whose INFO commandstats must not include other
 * clients, or that restart Redis.
 */
export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<{ url: string; port: number; handle: ChildHandle }> {
  const port = options.port ?? (await freePort());
  const persistence = options.aof ? ['--appendonly', 'yes', '--appendfsync', 'everysec', '--dir', options.dir ?? REPO_ROOT] : ['--appendonly', 'no'];
  const handle = await startChild({
    name: 'redis-server',
    command: 'redis-server',
    args: ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--loglevel', 'warning', '--logfile', '/dev/null'],
    env: process.env,
    cwd: REPO_ROOT,
    ready: () => pingRedis(port),
  });
  return { url: `redis://127.0.0.1:${port}`, port, handle };
}

/**
 * REDIS_URL (default redis://127.0.0.1:6379) when something answers PING there, else a private
 * redis-server from PATH (stopped by the caller); an error saying how to get one when there is none.
 */
export async function ensureRedis(): Promise<{ url: string; handle?: ChildHandle }> {
  const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
  const parsed = new URL(url);
  if (parsed.hostname === '127.0.0.1' || parsed.hostname === 'localhost') {
    if (await pingRedis(Number(parsed.port || 6379))) return { url };
  } else return { url };
  process.stderr.write(`bench: nothing answers at ${url}; starting a redis-server of the bench's own\n`);
  try {
    const priv = await startPrivateRedis();
    return { url: priv.url, handle: priv.handle };
  } catch (err) {
    throw new Error(`no Redis at ${url} and redis-server could not be started (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); install it (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis) or set REDIS_URL`, { cause: err });
  }
}

export function pingRedis(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}
