/**
 * A compiled service run as operators run it: `node services/<name>/dist/index.js`, built first
 * (incremental; a no-op when scripts/test.sh has already built).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { SHARED_REDIS_URL, deletePrefix, freePort, uniquePrefix } from './redis';

export const ROOT = path.resolve(__dirname, '../..');

export function buildService(name: string): void {
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', path.join(ROOT, 'services', name)], { cwd: ROOT, stdio: 'inherit' });
}

export function spawnService(name: string, env: Record<string, string>): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, [path.join(ROOT, 'services', name, 'dist/index.js')], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  return Object.assign(child, { output: () => output });
}

/** Runs until exit (killed after timeoutMs). */
export function runToExit(name: string, env: Record<string, string>, timeoutMs = 15_000): Promise<{ code: number | null; output: string }> {
  const child = spawnService(name, env);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output: child.output() });
    });
  });
}

/** Polls an URL until it answers 200. */
export async function waitForOk(url: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The checks every worker process (router, webhook-delivery) must pass as operators run it: bad
 * start-up input stops it with a message naming what is wrong, and once ready it serves the ops
 * endpoints and exits 0 on SIGTERM.
 */
export function describeWorkerProcess(name: string, opsPortVariable: string, badEnv: Record<string, string>, namedInError: string[]): void {
  describe(`the ${name} process`, () => {
    const prefix = uniquePrefix('proc');
    beforeAll(() => buildService(name), 120_000);
    afterAll(() => deletePrefix(SHARED_REDIS_URL, prefix));

    it('refuses to start on bad environment values and names every bad variable', async () => {
      const result = await runToExit(name, badEnv);
      expect(result.code).toBe(1);
      for (const text of namedInError) expect(result.output).toContain(text);
    });

    it('refuses to start on a config file that does not exist, naming it', async () => {
      const result = await runToExit(name, { REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, EVENTRELAY_CONFIG: '/nonexistent/eventrelay.json', [opsPortVariable]: '0' });
      expect(result.code).toBe(1);
      expect(result.output).toContain('EVENTRELAY_CONFIG');
      expect(result.output).toContain('/nonexistent/eventrelay.json');
    });

    it('serves /healthz, /readyz and /metrics, and exits 0 on SIGTERM', async () => {
      await expectServesThenStops(name, { REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, LOG_LEVEL: 'info' }, opsPortVariable, {
        metric: 'eventrelay_',
        otherPath: { path: '/other', status: 404 },
      });
    }, 30_000);
  });
}

/**
 * Runs the service on a free port (in `portVariable`) until /readyz answers, checks its ops
 * endpoints, then sends SIGTERM and expects a clean exit (0, `shutdown.done`).
 */
export async function expectServesThenStops(
  name: string,
  env: Record<string, string>,
  portVariable: string,
  checks: { metric: string; otherPath: { path: string; status: number } },
): Promise<void> {
  const port = await freePort();
  const child = spawnService(name, { ...env, [portVariable]: String(port) });
  try {
    await waitForOk(`http://127.0.0.1:${port}/readyz`);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain(checks.metric);
    expect((await fetch(`http://127.0.0.1:${port}${checks.otherPath.path}`)).status).toBe(checks.otherPath.status);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(child.output()).toContain('shutdown.done');
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}
