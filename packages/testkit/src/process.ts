/**
 * Child processes the harness starts (services, redis-server, receivers, bench helpers): spawn,
 * wait until ready, keep what they print, stop them with SIGTERM then SIGKILL, and kill whatever is
 * left when the caller gives up (killAll).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { REPO_ROOT, hostEnv } from './env.js';
import { sleep } from './eventually.js';

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A child process the harness tracks (killAll stops it). */
export interface ChildHandle {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number | undefined;
  /** Everything it wrote to stdout and stderr so far (the last 4 MB). */
  output(): string;
  /** Settles when it has exited. */
  readonly exited: Promise<Exit>;
  running(): boolean;
  /** Sends `signal` (SIGTERM by default) and waits for the exit, sending SIGKILL after `graceMs`. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<Exit>;
}

export interface ChildOptions {
  readonly name: string;
  /** Executable; the running Node by default. */
  readonly command?: string;
  readonly args: readonly string[];
  /** The child's whole environment; PATH is added from the host when missing. */
  readonly env?: NodeJS.ProcessEnv;
  /** The repository root by default. */
  readonly cwd?: string;
  /** Open an IPC channel (the child must be a Node script). */
  readonly ipc?: boolean;
  /** Own process group, so a Ctrl-C at the terminal reaches only the parent. */
  readonly detached?: boolean;
  /** Also write what the child prints to this process's stdout/stderr: as is, or each line prefixed with `[name]`. */
  readonly echo?: 'raw' | 'prefixed';
  /** Polled every 100 ms until it resolves true; without it the child counts as ready at once. */
  readonly ready?: (handle: ChildHandle) => Promise<boolean>;
  readonly readyTimeoutMs?: number;
}

const OUTPUT_LIMIT = 4 * 1024 * 1024;
const live = new Set<ChildHandle>();

/** SIGKILLs every child the harness started that is still running (on errors, signals, watchdogs). */
export function killAll(): void {
  for (const h of live) if (h.running()) h.child.kill('SIGKILL');
}

/** Spawns a tracked child without waiting for anything. */
export function spawnChild(opts: Omit<ChildOptions, 'ready' | 'readyTimeoutMs'>): ChildHandle {
  const env = { PATH: hostEnv('PATH') ?? '', ...opts.env };
  const stdio = ['ignore', 'pipe', 'pipe', ...(opts.ipc ? (['ipc'] as const) : [])] as const;
  const child = spawn(opts.command ?? process.execPath, [...opts.args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env,
    stdio: [...stdio],
    detached: opts.detached ?? false,
  });
  let output = '';
  const keep = (stream: NodeJS.WriteStream) => (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    output += text;
    if (output.length > OUTPUT_LIMIT) output = output.slice(-OUTPUT_LIMIT / 2);
    if (opts.echo === 'raw') stream.write(chunk);
    else if (opts.echo === 'prefixed')
      for (const line of text.split('\n')) if (line.trim() !== '') stream.write(`[${opts.name}] ${line}\n`);
  };
  child.stdout?.on('data', keep(process.stdout));
  child.stderr?.on('data', keep(process.stderr));
  let done = false;
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
    // A child that cannot be spawned (no 'exit' follows), or dies with its IPC channel open, must not take the caller down.
    child.on('error', (err) => {
      output += `\nspawn error: ${err.message}\n`;
      if (child.pid === undefined) {
        done = true;
        resolve({ code: null, signal: null });
      }
    });
  });
  const running = () => !done && child.exitCode === null && child.signalCode === null;
  const handle: ChildHandle = {
    name: opts.name,
    child,
    pid: child.pid,
    output: () => output,
    exited,
    running,
    async stop(signal = 'SIGTERM', graceMs = 15_000) {
      if (running()) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      live.delete(handle);
      return exited;
    },
  };
  void exited.then(() => live.delete(handle));
  live.add(handle);
  return handle;
}

/** Spawns a tracked child and waits until `ready` says so; throws (and kills it) if it exits or times out first. */
export async function startChild(opts: ChildOptions): Promise<ChildHandle> {
  const handle = spawnChild(opts);
  if (!opts.ready) return handle;
  const timeoutMs = opts.readyTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!handle.running()) {
      const exit = await handle.exited;
      throw new Error(`${opts.name} exited (${exit.code ?? exit.signal}) before it was ready:\n${tail(handle.output())}`);
    }
    if (await opts.ready(handle)) return handle;
    if (Date.now() > deadline) {
      await handle.stop('SIGKILL');
      throw new Error(`${opts.name} was not ready within ${timeoutMs} ms:\n${tail(handle.output())}`);
    }
    await sleep(100);
  }
}

/** Runs a child until it exits (SIGKILLed after `timeoutMs`). */
export async function runToExit(
  opts: Omit<ChildOptions, 'ready' | 'readyTimeoutMs'>,
  timeoutMs = 15_000,
): Promise<Exit & { output: string }> {
  const handle = spawnChild(opts);
  const timer = setTimeout(() => handle.child.kill('SIGKILL'), timeoutMs);
  const exit = await handle.exited;
  clearTimeout(timer);
  return { ...exit, output: handle.output() };
}

/** The status a GET of `url` answers, or undefined when nothing answers within a second. */
export function probe(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 1000, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}

/** Polls `url` until it answers 200. */
export async function waitForOk(url: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await probe(url)) !== 200) {
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
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

function tail(text: string, lines = 40): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
