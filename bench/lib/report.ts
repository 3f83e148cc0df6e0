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
