/** Child server processes: start, wait until they answer, measure their CPU, stop within bounds. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';

export { freePort } from '../../test/support/redis.js';

export interface ServerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  /** Last lines the child wrote, for error messages. */
  output(): string;
  stop(): Promise<void>;
}

const live = new Set<ServerProcess>();

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
}

export async function startServer(opts: StartOptions): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...opts.args], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
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
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const proc: ServerProcess = {
    name: opts.name,
    child,
    port: opts.port,
    url: `http://127.0.0.1:${opts.port}`,
    output: () => tail.join('\n'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      live.delete(proc);
    },
  };
  live.add(proc);

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      live.delete(proc);
      throw new Error(`${opts.name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${proc.output()}`);
    }
    const status = await probe(proc.url + opts.readyPath);
    if (status !== undefined && (opts.readyStatus === undefined || status === opts.readyStatus)) return proc;
    if (Date.now() > deadline) {
      await proc.stop();
      throw new Error(`${opts.name} was not ready within ${opts.readyTimeoutMs ?? 30_000} ms:\n${proc.output()}`);
    }
    await sleep(100);
  }
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
