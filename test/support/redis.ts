/**
 * Redis for tests: the shared server on 127.0.0.1:6379 (REDIS_URL overrides) with a unique key
 * prefix per test, or a private redis-server on a free port for tests that stop or kill Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

export const SHARED_REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** A hash-tagged prefix, as a Redis Cluster deployment would use. */
export function uniquePrefix(label: string): string {
  return `{t-${label}-${randomBytes(4).toString('hex')}}`;
}

/** Deletes every key under the prefix. */
export async function deletePrefix(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * A redis-server of this test's own, never the shared one, with AOF fsynced on every write so
 * that what it acknowledged survives stop() and start() as it would in production.
 */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-redis-'));
  let child: ChildProcess | undefined;
  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir], { stdio: 'ignore' });
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    for (let i = 0; i < 100; i++) {
      try {
        await client.connect();
        await client.ping();
        client.disconnect();
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    throw new Error(`redis-server on port ${port} did not start`);
  };
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, start, stop };
}
