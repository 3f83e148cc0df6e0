/**
 * CPU and memory of named processes, read from /proc once a second: CPU used between two marks
 * (a process replaced mid-run, as a killed webhook-delivery is, adds its successor's CPU), peak RSS
 * (VmHWM) per name, and an RSS timeline for the soak.
 */
import { machineBusySeconds, processCpuSeconds, processMemoryKb } from './proc.js';
import { round } from './report.js';

export interface Named {
  readonly name: string;
  readonly pid: number | undefined;
}

interface Track {
  pid: number | undefined;
  lastCpu: number;
  cpu: number;
  peakKb: number;
}

export class ResourceSampler {
  private readonly tracks = new Map<string, Track>();
  private machineStart = machineBusySeconds();
  private wallStart = performance.now();
  /** [seconds since `start`, RSS MB] per name. */
  readonly rss = new Map<string, [number, number][]>();
  private readonly t0 = performance.now();

  constructor(private readonly processes: () => readonly Named[]) {}

  /** Starts a CPU measurement window (CPU counted from here). */
  mark(): void {
    this.sample();
    for (const t of this.tracks.values()) t.cpu = 0;
    this.machineStart = machineBusySeconds();
    this.wallStart = performance.now();
  }

  sample(recordRss = false): void {
    const now = (performance.now() - this.t0) / 1000;
    for (const { name, pid } of this.processes()) {
      let t = this.tracks.get(name);
      if (!t || t.pid !== pid) {
        // A new process: its CPU so far was all spent since it started, within this run.
        t = { pid, lastCpu: t && t.pid !== pid ? 0 : (processCpuSeconds(pid) ?? 0), cpu: t?.cpu ?? 0, peakKb: t?.peakKb ?? 0 };
        this.tracks.set(name, t);
      }
      const cpu = processCpuSeconds(pid);
      if (cpu !== undefined) {
        t.cpu += Math.max(0, cpu - t.lastCpu);
        t.lastCpu = cpu;
      }
      const mem = processMemoryKb(pid);
      if (mem) {
        t.peakKb = Math.max(t.peakKb, mem.peakKb);
        if (recordRss) {
          const list = this.rss.get(name) ?? [];
          list.push([round(now, 1), round(mem.rssKb / 1024, 1)]);
          this.rss.set(name, list);
        }
      }
    }
  }

  /** CPU % of one core per process since `mark()`, and the rest of the machine as "other". */
  cpuPct(): Record<string, number> {
    this.sample();
    const wallS = (performance.now() - this.wallStart) / 1000;
    const out: Record<string, number> = {};
    let ours = 0;
    for (const [name, t] of this.tracks) {
      out[name] = round((t.cpu / wallS) * 100, 1);
      ours += t.cpu;
    }
    const machine = machineBusySeconds();
    if (machine !== undefined && this.machineStart !== undefined) {
      out['other'] = Math.max(0, round(((machine - this.machineStart - ours) / wallS) * 100, 1));
      out['machine'] = round(((machine - this.machineStart) / wallS) * 100, 1);
    }
    return out;
  }

  peakRssMb(): Record<string, number> {
    this.sample();
    return Object.fromEntries([...this.tracks].map(([name, t]) => [name, round(t.peakKb / 1024, 1)]));
  }
}
