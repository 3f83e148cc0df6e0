/**
 * The compiled ingest as operators run it: bad start-up input stops it with a message naming
 * what is wrong, and SIGTERM shuts it down cleanly (exit 0) after it has served.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { post } from '../../../test/support/ingest';
import { SHARED_REDIS_URL, deletePrefix, freePort, uniquePrefix } from '../../../test/support/redis';

const ROOT = path.resolve(__dirname, '../../..');
const ENTRY = path.join(ROOT, 'services/ingest/dist/index.js');

function run(env: Record<string, string>, timeoutMs = 15_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [ENTRY], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the ingest process', () => {
  const prefix = uniquePrefix('proc');
  beforeAll(() => {
    // Incremental: a no-op when scripts/test.sh has already built.
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', path.join(ROOT, 'services/ingest')], { cwd: ROOT, stdio: 'inherit' });
  }, 120_000);
  afterAll(() => deletePrefix(SHARED_REDIS_URL, prefix));

  it('refuses to start on bad environment values and names every bad variable', async () => {
    const result = await run({ INGEST_PORT: 'eighty', EVENTRELAY_PREFIX: 'a:b', LOG_LEVEL: 'loud', REDIS_URL: 'http://nope' });
    expect(result.code).toBe(1);
    for (const name of ['INGEST_PORT', 'EVENTRELAY_PREFIX', 'LOG_LEVEL', 'REDIS_URL']) expect(result.stderr).toContain(name);
  });

  it('refuses to start on an invalid config file, naming the field, and writes nothing', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-'));
    const file = path.join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ sources: [{ id: 'ok', name: 'Ok', type: 'web', writeKey: 'good-write-key-1' }, { id: 'bad', name: 'Bad', type: 'desktop', writeKey: 'k' }] }));
    const result = await run({ REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, EVENTRELAY_CONFIG: file, INGEST_PORT: '0' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/sources\[1\]\.type/);
    expect(result.stderr).toMatch(/sources\[1\]\.writeKey/);
    const { Redis } = await import('ioredis');
    const redis = new Redis(SHARED_REDIS_URL);
    expect(await redis.keys(`${prefix}:*`)).toEqual([]);
    redis.disconnect();
  });

  it('serves, then exits 0 on SIGTERM after closing its server, queue and Redis', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-'));
    const file = path.join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ sources: [{ id: 'proc', name: 'Proc', type: 'server', writeKey: 'proc-write-key-1' }] }));
    const port = await freePort();
    const child = spawn(process.execPath, [ENTRY], {
      env: { PATH: process.env['PATH'] ?? '', REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, EVENTRELAY_CONFIG: file, INGEST_PORT: String(port), INGEST_HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logs = '';
    child.stdout.on('data', (d: Buffer) => (logs += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 15_000;
      while (!logs.includes('ingest.listening') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const res = await post(`http://127.0.0.1:${port}`, '/v1/track', { userId: 'u', event: 'Before shutdown' }, { writeKey: 'proc-write-key-1' });
      expect(res.status).toBe(200);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(logs).toContain('shutdown.done');
      // One canonical line per request, and the write key never in the logs.
      expect(logs).toContain('"msg":"intake.request"');
      expect(logs).not.toContain('proc-write-key-1');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
