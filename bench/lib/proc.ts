/**
 * What the bench adds to the harness (@eventrelay/testkit): a Redis client, the baseline servers,
 * CPU and memory of named processes from Linux /proc, and the run's lifetime.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort, killAll, probe, startChild, type ChildHandle } from '@eventrelay/testkit';
import { BENCH_DIR, round } from './report.js';

export function connectRedis(url: string, sentinel?: { host: string; port: number; name: string }): Redis {
  const options = { maxRetriesPerRequest: 1, connectionName: 'eventrelay-bench' };
  // Through the Sentinel, as the services connect: the bench's readings follow a failover too.
  const client = sentinel
    ? new Redis({ ...options, sentinels: [{ host: sentinel.host, port: sentinel.port }], name: sentinel.name })
    : new Redis(url, options);
  client.on('error', () => undefined);
  return client;
}

/** A field of INFO's text. */
export const infoField = (info: string, name: string): string | undefined => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();

/** A baseline server (baselines/<script>) on a free port, ready once it answers at all. */
export async function startBaseline(script: string): Promise<ChildHandle & { url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const handle = await startChild({
    name: path.basename(script, '.ts'),
    args: ['--import', 'tsx', path.join(BENCH_DIR, 'baselines', script)],
    env: { ...process.env, PORT: String(port), NODE_ENV: 'production' },
    cwd: BENCH_DIR,
    echo: 'prefixed',
    ready: async () => (await probe(url)) !== undefined,
  });
  return Object.assign(handle, { url });
}

const read = (file: string): string | undefined => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

/** User + system CPU seconds a process has used so far (utime and stime, after the command name), or undefined. */
export function processCpuSeconds(pid: number | undefined): number | undefined {
  const stat = pid === undefined ? undefined : read(`/proc/${pid}/stat`);
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields ? (Number(fields[11]) + Number(fields[12])) / 100 : undefined;
}

/** Resident memory of a process now and at its peak (VmRSS, VmHWM), in KiB, or undefined. */
export function processMemoryKb(pid: number | undefined): { rssKb: number; peakKb: number } | undefined {
  const status = pid === undefined ? undefined : read(`/proc/${pid}/status`);
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status ?? '')?.[1] ?? NaN);
  const [rssKb, peakKb] = [kb('VmRSS'), kb('VmHWM')];
  return Number.isFinite(rssKb) && Number.isFinite(peakKb) ? { rssKb, peakKb } : undefined;
}

/** Busy CPU seconds of the whole machine so far, summed over cores (/proc/stat less idle and iowait). */
export function machineBusySeconds(): number | undefined {
  const ticks = (read('/proc/stat')?.split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  return ticks.length < 8 ? undefined : (ticks.slice(0, 8).reduce((a, b) => a + b, 0) - (ticks[3] ?? 0) - (ticks[4] ?? 0)) / 100;
}

/**
 * CPU and memory of named processes, sampled once a second: CPU used since `mark()` (a process
 * replaced mid-run, as a killed webhook-delivery is, adds its successor's CPU), peak RSS (VmHWM)
 * per name, and with `sample(true)` an RSS timeline for the soak.
 */
export class ResourceSampler {
  private readonly tracks = new Map<string, { pid: number | undefined; lastCpu: number; cpu: number; peakKb: number }>();
  private machineStart = machineBusySeconds();
  private wallStart = performance.now();
  private readonly t0 = performance.now();
  /** [seconds since the sampler was made, RSS MB] per name. */
  readonly rss = new Map<string, [number, number][]>();

  constructor(private readonly processes: () => readonly { name: string; pid: number | undefined }[]) {}

  mark(): void {
    this.sample();
    for (const t of this.tracks.values()) t.cpu = 0;
    this.machineStart = machineBusySeconds();
    this.wallStart = performance.now();
  }

  sample(recordRss = false): void {
    const at = round((performance.now() - this.t0) / 1000, 1);
    for (const { name, pid } of this.processes()) {
      let t = this.tracks.get(name);
      if (!t || t.pid !== pid) {
        // A new process: all its CPU so far was spent within this run.
        t = { pid, lastCpu: t ? 0 : (processCpuSeconds(pid) ?? 0), cpu: t?.cpu ?? 0, peakKb: t?.peakKb ?? 0 };
        this.tracks.set(name, t);
      }
      const cpu = processCpuSeconds(pid);
      if (cpu !== undefined) [t.cpu, t.lastCpu] = [t.cpu + Math.max(0, cpu - t.lastCpu), cpu];
      const mem = processMemoryKb(pid);
      if (!mem) continue;
      t.peakKb = Math.max(t.peakKb, mem.peakKb);
      if (recordRss) this.rss.set(name, [...(this.rss.get(name) ?? []), [at, round(mem.rssKb / 1024, 1)]]);
    }
  }

  /** CPU % of one core per process since `mark()`, the rest of the machine as "other", and the whole "machine". */
  cpuPct(): Record<string, number> {
    this.sample();
    const wallS = (performance.now() - this.wallStart) / 1000;
    const pct = (s: number) => round((s / wallS) * 100, 1);
    const out = Object.fromEntries([...this.tracks].map(([name, t]) => [name, pct(t.cpu)]));
    const machine = machineBusySeconds();
    if (machine !== undefined && this.machineStart !== undefined) {
      const ours = [...this.tracks.values()].reduce((n, t) => n + t.cpu, 0);
      out['other'] = Math.max(0, pct(machine - this.machineStart - ours));
      out['machine'] = pct(machine - this.machineStart);
    }
    return out;
  }

  peakRssMb(): Record<string, number> {
    this.sample();
    return Object.fromEntries([...this.tracks].map(([name, t]) => [name, round(t.peakKb / 1024, 1)]));
  }
}

/** CPU µs per delivered call for each process (not "other" or "machine"), and their sum. */
export function cpuPerCall(cpu: Record<string, number>, seconds: number, delivered: number): Record<string, number> {
  if (delivered === 0) return {};
  const out: Record<string, number> = {};
  for (const [name, pct] of Object.entries(cpu))
    if (name !== 'other' && name !== 'machine') out[name] = Math.round(((pct / 100) * 1e6 * seconds) / delivered);
  return { ...out, sum: Object.values(out).reduce((a, b) => a + b, 0) };
}

/**
 * Runs a bench's main with cleanup on success, failure, SIGINT and SIGTERM, and a watchdog that
 * kills everything after `boundS` seconds however a child or Redis misbehaves.
 */
export function runBench(main: () => Promise<void>, cleanup: () => Promise<unknown>, boundS: number): void {
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
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      process.stderr.write(`bench: ${signal}; stopping\n`);
      void stopAll().finally(() => process.exit(130));
    });
  main().then(stopAll, async (err: unknown) => {
    process.stderr.write(`bench: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
    await stopAll();
  });
}
