/** The benches' knobs, read from the environment with a clear error for a bad value. */

export function envNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`${name} must be a number between ${min} and ${max}, got "${raw}"`);
  return n;
}

/** BENCH_PHASES: a comma-separated subset of `all`, in the order given; all of them when unset. */
export function selectedPhases<P extends string>(all: readonly P[]): P[] {
  const raw = process.env['BENCH_PHASES'];
  if (!raw) return [...all];
  return raw.split(',').map((p) => {
    const name = p.trim() as P;
    if (!all.includes(name)) throw new Error(`BENCH_PHASES: unknown phase "${p}"; use ${all.join(', ')}`);
    return name;
  });
}
