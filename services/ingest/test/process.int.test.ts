/**
 * The compiled ingest as operators run it: bad start-up input stops it with a message naming
 * what is wrong, and SIGTERM shuts it down cleanly (exit 0) after it has served.
 */
import { execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deletePrefix, freePort, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

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
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', path.join(ROOT, 'services/ingest')], {
      cwd: ROOT,
      stdio: 'inherit',
    });
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
    writeFileSync(
      file,
      JSON.stringify({
        sources: [
          { id: 'ok', name: 'Ok', type: 'web', writeKey: 'good-write-key-1' },
          { id: 'bad', name: 'Bad', type: 'desktop', writeKey: 'k' },
        ],
      }),
    );
    const result = await run({ REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, EVENTRELAY_CONFIG: file, INGEST_PORT: '0' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/sources\[1\]\.type/);
    expect(result.stderr).toMatch(/sources\[1\]\.writeKey/);
    const { Redis } = await import('ioredis');
    const redis = new Redis(SHARED_REDIS_URL);
    try {
      expect(await redis.keys(`${prefix}:*`)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });

  it('on SIGTERM finishes the request in flight, closes kept-alive connections, and exits 0', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-'));
    const file = path.join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ sources: [{ id: 'proc', name: 'Proc', type: 'server', writeKey: 'proc-write-key-1' }] }));
    const port = await freePort();
    const child = spawn(process.execPath, [ENTRY], {
      env: {
        PATH: process.env['PATH'] ?? '',
        REDIS_URL: SHARED_REDIS_URL,
        EVENTRELAY_PREFIX: prefix,
        EVENTRELAY_CONFIG: file,
        INGEST_PORT: String(port),
        INGEST_HOST: '127.0.0.1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logs = '';
    child.stdout.on('data', (d: Buffer) => (logs += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const auth = `Basic ${Buffer.from('proc-write-key-1:').toString('base64')}`;
    try {
      const deadline = Date.now() + 15_000;
      while (!logs.includes('ingest.listening') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      // A kept-alive connection, as SDKs hold them.
      const first = await request(agent, port, auth, JSON.stringify({ userId: 'u', event: 'Before shutdown' }));
      expect(first.status).toBe(200);

      // A request whose body is still arriving when SIGTERM comes, on that same connection.
      const body = JSON.stringify({ userId: 'u', event: 'In flight' });
      const inFlight = request(agent, port, auth, body, { split: true, beforeRest: () => child.kill('SIGTERM') });
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(answer.connection).toBe('close');

      expect(await exited).toBe(0);
      expect(logs).toContain('shutdown.done');
      expect(logs).not.toContain('shutdown.step_failed');
      // One canonical line per request, and the write key never in the logs.
      expect(logs.match(/"msg":"intake.request"/g)).toHaveLength(2);
      expect(logs).not.toContain('proc-write-key-1');
    } finally {
      agent.destroy();
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

function request(
  agent: http.Agent,
  port: number,
  authorization: string,
  body: string,
  options: { split?: boolean; beforeRest?: () => void } = {},
): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/track',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
      },
    );
    req.on('error', reject);
    if (!options.split) {
      req.end(body);
      return;
    }
    const half = Math.floor(body.length / 2);
    req.write(body.slice(0, half));
    setTimeout(() => {
      options.beforeRest?.();
      setTimeout(() => req.end(body.slice(half)), 300);
    }, 300);
  });
}
