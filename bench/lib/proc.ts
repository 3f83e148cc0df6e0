/** Child processes (servers and others): start, wait until they are ready, measure their CPU and memory, stop within bounds. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';

export { freePort } from '../../test/support/redis.js';

/** A child process this module tracks (killAll stops it), with or without an HTTP port. */
export interface ChildHandle {
  readonly name: string;
  readonly child: ChildProcess;
  /** Last lines the child wrote, for error messages. */
  output(): string;
  stop(): Promise<void>;
}

export interface ServerProcess extends ChildHandle {
  readonly port: number;
  readonly url: string;
}

const live = new Set<ChildHandle>();

/** Kills whatever is still running (used on errors and signals). */
export function killAll(): void {
  for (const p of live) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
}

export interface StartOptions {
  readonly name: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly port: number;
  /** GET this path until it answers `readyStatus` (any status when undefined). */
  readonly readyPath: string;
  readonly readyStatus?: number;
  readonly readyTimeoutMs?: number;
  /** Open an IPC channel to the child (it must be a Node script); default false. */
  readonly ipc?: boolean;
}

export interface ChildOptions {
  readonly name: string;
  /** Executable; the running Node by default. */
  readonly command?: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly ipc?: boolean;
  /** Polled every 100 ms until it resolves true. */
  readonly ready: (handle: ChildHandle) => Promise<boolean>;
  readonly readyTimeoutMs?: number;
}

/** Spawns a tracked child and waits until `ready` says so; throws (and stops it) if it exits or times out first. */
export async function startChild(opts: ChildOptions): Promise<ChildHandle> {
  const child = spawn(opts.command ?? process.execPath, [...opts.args], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe', ...(opts.ipc ? (['ipc'] as const) : [])] });
  const tail: string[] = [];
  const keep = (prefix: string) => (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      tail.push(line);
      if (tail.length > 40) tail.shift();
      process.stderr.write(`[${opts.name}${prefix}] ${line}\n`);
    }
  };
  child.stdout?.on('data', keep(''));
  child.stderr?.on('data', keep(' stderr'));
  // A child that dies mid-run must not take the bench down with an unhandled IPC error.
  child.on('error', (err) => tail.push(`spawn error: ${err.message}`));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const handle: ChildHandle = {
    name: opts.name,
    child,
    output: () => tail.join('\n'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      live.delete(handle);
    },
  };
  live.add(handle);

  const timeoutMs = opts.readyTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      live.delete(handle);
      throw new Error(`${opts.name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${handle.output()}`);
    }
    if (await opts.ready(handle)) return handle;
    if (Date.now() > deadline) {
      await handle.stop();
      throw new Error(`${opts.name} was not ready within ${timeoutMs} ms:\n${handle.output()}`);
    }
    await sleep(100);
  }
}

export async function startServer(opts: StartOptions): Promise<ServerProcess> {
  const url = `http://127.0.0.1:${opts.port}`;
  const handle = await startChild({
    name: opts.name,
    args: opts.args,
    env: opts.env,
    cwd: opts.cwd,
    ...(opts.ipc ? { ipc: true } : {}),
    ...(opts.readyTimeoutMs !== undefined ? { readyTimeoutMs: opts.readyTimeoutMs } : {}),
    ready: async () => {
      const status = await probe(url + opts.readyPath);
      return status !== undefined && (opts.readyStatus === undefined || status === opts.readyStatus);
    },
  });
  return { ...handle, port: opts.port, url };
}

function probe(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 1000, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** User + system CPU seconds a process has used so far (Linux /proc), or undefined elsewhere. */
export function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Resident memory of a process now and at its peak (VmRSS, VmHWM from Linux /proc), in KiB; undefined elsewhere. */
export function processMemoryKb(pid: number | undefined): { rssKb: number; peakKb: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    const rssKb = kb('VmRSS');
    const peakKb = kb('VmHWM');
    return Number.isFinite(rssKb) && Number.isFinite(peakKb) ? { rssKb, peakKb } : undefined;
  } catch {
    return undefined;
  }
}

/** Busy CPU seconds of the whole machine so far, summed over cores (Linux /proc/stat). */
export function machineBusySeconds(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const [, ...values] = line.trim().split(/\s+/);
    const ticks = values.map(Number);
    const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return (total - idle) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Runs a bench's main with cleanup on success, failure, SIGINT and SIGTERM, and a watchdog that
 * kills everything after `boundS` seconds however a child or Redis misbehaves.
 */
export function runBench(main: () => Promise<void>, cleanup: () => Promise<void>, boundS: number): void {
  const watchdog = setTimeout(() => {
    process.stderr.write(`bench: still running after ${boundS} s; giving up\n`);
    killAll();
    process.exit(2);
  }, boundS * 1000);
  watchdog.unref();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`bench: ${signal}; stopping\n`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  main().then(
    () => cleanup(),
    async (err: unknown) => {
      process.stderr.write(`bench: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
      await cleanup();
    },
  );
}
