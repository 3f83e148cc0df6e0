/**
 * A compiled service run as operators run it: `node services/<name>/dist/index.js`, built first
 * (incremental; a no-op when scripts/test.sh has already built).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

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
