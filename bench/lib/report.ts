/** The benches' knobs, number formats, terminal tables and result files. */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const BENCH_DIR = path.resolve(__dirname, '..');
export const RESULTS_DIR = path.join(BENCH_DIR, 'results');

export function envNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`${name} must be a number between ${min} and ${max}, got "${raw}"`);
  return n;
}

/** A comma-separated subset of `all` from `name` (BENCH_PHASES, BENCH_MODES…), in the order given; `fallback` (all of them) when unset. */
export function envList<P extends string>(name: string, all: readonly P[], fallback: readonly P[] = all): P[] {
  const raw = process.env[name];
  if (!raw) return [...fallback];
  return raw.split(',').map((p) => {
    if (!all.includes(p.trim() as P)) throw new Error(`${name}: unknown value "${p}"; use ${all.join(', ')}`);
    return p.trim() as P;
  });
}

/** Plain-text table for the terminal. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

type Num = number | null | undefined;
const finite = (n: Num): n is number => typeof n === 'number' && Number.isFinite(n);
export const fmtInt = (n: Num): string => (finite(n) ? Math.round(n).toLocaleString('en-US') : '-');
export const fmtMs = (n: Num): string => (finite(n) ? n.toFixed(n < 10 ? 2 : 1) : '-');
export const fmtFixed = (n: Num, digits = 2): string => (finite(n) ? n.toFixed(digits) : '-');
export const verdict = (v: boolean | undefined): string => (v === undefined ? 'not measured' : v ? 'met' : 'MISSED');
/** "targets: a met; b MISSED  =>  NOT ALL MET", and whether all were met. */
export function targetsLine(met: Record<string, boolean | undefined>): { line: string; all: boolean } {
  const all = Object.values(met).every((v) => v === true);
  const each = Object.entries(met).map(([k, v]) => `${k} ${verdict(v)}`);
  return { line: `targets: ${each.join('; ')}  =>  ${all ? 'ALL MET' : 'NOT ALL MET'}`, all };
}

export const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;
/** round(n), or null for a missing figure. */
export const roundOrNull = (n: Num, digits = 2): number | null => (finite(n) ? round(n, digits) : null);
export function mean(values: ArrayLike<number>): number | null {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] as number;
  return values.length === 0 ? null : round(sum / values.length);
}
export const now = (): number => performance.timeOrigin + performance.now();

export function machine(): { description: string; cpus: number; model: string; total_mem_gib: number; node: string; platform: string } {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown';
  const gib = round(os.totalmem() / 2 ** 30, 1);
  const platform = `${os.platform()} ${os.release()}`;
  const description = `${cpus.length} x ${model}, ${Math.round(gib)} GiB, ${platform}, Node ${process.version}`;
  return { description, cpus: cpus.length, model, total_mem_gib: gib, node: process.version, platform };
}

/**
 * Writes `results/<dated>-<start time>.<ext>` (git-ignored: a record of this run only) and, when the
 * run was complete, `results/<latest>` (`latest.json`, `pipeline-latest.json`…: the committed files
 * the docs quote). Objects are written as compactJson. Returns the paths written.
 */
export function writeResult(latest: string, dated: string, started: Date, data: unknown, complete: boolean): string[] {
  const stamp = started
    .toISOString()
    .replace(/:/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  const files = [`${dated}-${stamp}${path.extname(latest)}`, ...(complete ? [latest] : [])].map((f) => path.join(RESULTS_DIR, f));
  for (const f of files) writeFileSync(f, typeof data === 'string' ? data : compactJson(data));
  return files.map((f) => path.relative(path.resolve(BENCH_DIR, '..'), f));
}

/** Indented JSON with arrays of numbers on one line: the timelines stay readable and the file small. */
export function compactJson(value: unknown): string {
  const text = JSON.stringify(value, null, 2);
  return text.replace(/\[\s+(-?[\d.e+-]+(?:,\s+-?[\d.e+-]+)*)\s+\]/g, (_m, inner: string) => `[${inner.split(/,\s+/).join(', ')}]`) + '\n';
}
