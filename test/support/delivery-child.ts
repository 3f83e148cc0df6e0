/**
 * The compiled webhook-delivery as a real child process (as operators run it), for tests that
 * kill it, stop it or restart it against a prefix the test owns.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from './redis';
import { buildService } from './service-process';

const ROOT = path.resolve(__dirname, '../..');
const ENTRY = path.join(ROOT, 'services/webhook-delivery/dist/index.js');

export interface DeliveryChild {
  readonly process: ChildProcess;
  readonly port: number;
  /** What the child wrote so far. */
  output(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Incremental: a no-op when the build is current. Workspace packages resolve to dist/ outside jest. */
export function buildDelivery(): void {
  buildService('webhook-delivery');
}

/** Starts the compiled webhook-delivery and waits until its /readyz answers 200. */
export async function startDeliveryChild(prefix: string, redisUrl: string, env: Record<string, string> = {}): Promise<DeliveryChild> {
  const port = await freePort();
  const child = spawn(process.execPath, [ENTRY], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', REDIS_URL: redisUrl, EVENTRELAY_PREFIX: prefix, DELIVERY_METRICS_PORT: String(port), WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const started: DeliveryChild = { process: child, port, output: () => output, exited };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`webhook-delivery exited during start-up (${child.exitCode ?? child.signalCode}):\n${output}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return started;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`webhook-delivery not ready within 30 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Sends `signal` and waits for the exit, killing it after `graceMs`. */
export async function stopChild(c: DeliveryChild, signal: NodeJS.Signals, graceMs = 10_000): Promise<void> {
  if (c.process.exitCode !== null || c.process.signalCode !== null) return;
  c.process.kill(signal);
  const timer = setTimeout(() => c.process.kill('SIGKILL'), graceMs);
  await c.exited;
  clearTimeout(timer);
}
