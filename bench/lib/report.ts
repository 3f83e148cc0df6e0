/** The benches' knobs, number formats, terminal tables and result files. */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function envNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`${name} must be a number between ${min} and ${max}, got "${raw}"`);
  return n;
}

/** A comma-separated subset of `all` from `name` (BENCH_PHASES, BENCH_MODES…), in the order given; all of them when unset. */
export function envList<P extends string>(name: string, all: readonly P[]): P[] {
  const raw = process.env[name];
  if (!raw) return [...all];
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

export const fmtInt = (n: number | undefined): string =>
  n === undefined || !Number.isFinite(n) ? '-' : Math.round(n).toLocaleString('en-US');
export const fmtMs = (n: number | undefined): string =>
  n === undefined || !Number.isFinite(n) ? '-' : n < 10 ? n.toFixed(2) : n.toFixed(1);
export const verdict = (v: boolean | undefined): string => (v === undefined ? 'not measured' : v ? 'met' : 'MISSED');

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function machine(): { description: string; cpus: number; model: string; total_mem_gib: number; node: string; platform: string } {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown';
  const gib = round(os.totalmem() / 2 ** 30, 1);
  return {
    description: `${cpus.length} x ${model}, ${Math.round(gib)} GiB, ${os.platform()} ${os.release()}, Node ${process.version}`,
    cpus: cpus.length,
    model,
    total_mem_gib: gib,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

/**
 * Writes `<name>-<start time>.<ext>` under `dir` (git-ignored: a record of this run only) and, when
 * the run was complete, `<name>.<ext>` (`latest.json`, `pipeline-latest.json`…: the committed files
 * the docs quote). Returns the paths written.
 */
export function writeResult(
  dir: string,
  name: { dated: string; latest: string },
  started: Date,
  text: string,
  complete: boolean,
): string[] {
  const stamp = started
    .toISOString()
    .replace(/:/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  const ext = path.extname(name.latest);
  const files = [path.join(dir, `${name.dated}-${stamp}${ext}`), ...(complete ? [path.join(dir, name.latest)] : [])];
  for (const f of files) writeFileSync(f, text);
  return files.map((f) => path.relative(path.resolve(dir, '..', '..'), f));
}

/** Indented JSON with arrays of numbers on one line: the timelines stay readable and the file small. */
export function compactJson(value: unknown): string {
  return (
    JSON.stringify(value, null, 2).replace(
      /\[\s+(-?[\d.e+-]+(?:,\s+-?[\d.e+-]+)*)\s+\]/g,
      (_m, inner: string) => `[${inner.split(/,\s+/).join(', ')}]`,
    ) + '\n'
  );
}
