/** What the bench adds to the harness (@eventrelay/testkit): a Redis client, helper servers, CPU and memory from /proc, and the run's lifetime. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { killAll, probe, startChild, type ChildHandle } from '@eventrelay/testkit';

export const BENCH_DIR = path.resolve(__dirname, '..');

export function connectRedis(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1, connectionName: 'eventrelay-bench' });
  client.on('error', () => undefined);
  return client;
}

export interface ServerProcess extends ChildHandle {
  readonly url: string;
}

/** A helper server (baseline, bench script) on `port`, ready once `readyPath` answers at all. */
export async function startServer(o: {
  name: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  port: number;
  readyPath: string;
  ipc?: boolean;
}): Promise<ServerProcess> {
  const url = `http://127.0.0.1:${o.port}`;
  const handle = await startChild({
    name: o.name,
    args: o.args,
    env: o.env,
    cwd: BENCH_DIR,
    echo: 'prefixed',
    ...(o.ipc ? { ipc: true } : {}),
    ready: async () => (await probe(url + o.readyPath)) !== undefined,
  });
  return Object.assign(handle, { url });
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
    const [rssKb, peakKb] = [kb('VmRSS'), kb('VmHWM')];
    return Number.isFinite(rssKb) && Number.isFinite(peakKb) ? { rssKb, peakKb } : undefined;
  } catch {
    return undefined;
  }
}

/** Busy CPU seconds of the whole machine so far, summed over cores (Linux /proc/stat). */
export function machineBusySeconds(): number | undefined {
  try {
    const ticks = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
    return (ticks.slice(0, 8).reduce((a, b) => a + b, 0) - (ticks[3] ?? 0) - (ticks[4] ?? 0)) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Runs a bench's main with cleanup on success, failure, SIGINT and SIGTERM, and a watchdog that
 * kills everything after `boundS` seconds however a child or Redis misbehaves.
 */
export function runBench(main: () => Promise<void>, cleanup: () => Promise<void>, boundS: number): void {
  const stopAll = async () => {
    killAll();
    await cleanup();
  };
  const watchdog = setTimeout(() => {
    process.stderr.write(`bench: still running after ${boundS} s; giving up\n`);
    killAll();
    process.exit(2);
  }, boundS * 1000);
  watchdog.unref();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`bench: ${signal}; stopping\n`);
      void stopAll().finally(() => process.exit(130));
    });
  }
  main().then(stopAll, async (err: unknown) => {
    process.stderr.write(`bench: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
    await stopAll();
  });
}
