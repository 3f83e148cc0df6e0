import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Plain-text table for the terminal. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function fmtInt(n: number | undefined): string {
  return n === undefined || !Number.isFinite(n) ? '-' : Math.round(n).toLocaleString('en-US');
}

export function fmtMs(n: number | undefined): string {
  return n === undefined || !Number.isFinite(n) ? '-' : n < 10 ? n.toFixed(2) : n.toFixed(1);
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/**
 * Writes `<name>-<start time>.json` under `dir`, and `<name>-latest.json` (the file the README
 * quotes) only when every phase ran. Prints and returns the paths written.
 */
export function writeResults(dir: string, repoRoot: string, name: string, started: Date, json: unknown, allPhases: boolean): string[] {
  mkdirSync(dir, { recursive: true });
  const stamp = started.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
  const files = [path.join(dir, `${name}-${stamp}.json`), ...(allPhases ? [path.join(dir, `${name}-latest.json`)] : [])];
  for (const file of files) writeFileSync(file, JSON.stringify(json, null, 2) + '\n');
  const written = files.map((f) => path.relative(repoRoot, f));
  process.stdout.write(`wrote ${written.join(' and ')}\n`);
  return written;
}

/** Indented JSON with arrays of numbers on one line: the timelines stay readable and the file small. */
export function compactJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/\[\s+(-?[\d.e+-]+(?:,\s+-?[\d.e+-]+)*)\s+\]/g, (_m, inner: string) => `[${inner.split(/,\s+/).join(', ')}]`) + '\n';
}
