/**
 * A count over a sliding window, in buckets: what the adaptive limit (2xx and answers in the last
 * second) and the breaker (answers and failures in the last 10 s) read. Pure: the time is an
 * argument; the window moves whenever a count is added or read.
 */
export class SlidingCount {
  private readonly buckets: number[];
  /** Start of the newest bucket (buckets[0]). */
  private newestAt = 0;

  constructor(
    private readonly bucketMs: number,
    buckets: number,
  ) {
    this.buckets = new Array<number>(buckets).fill(0);
  }

  add(now: number, n = 1): void {
    this.roll(now);
    this.buckets[0]! += n;
  }

  /** The count over the window ending at `now`. */
  total(now: number): number {
    this.roll(now);
    let total = 0;
    for (const n of this.buckets) total += n;
    return total;
  }

  /** When the oldest bucket holding a count began (undefined when none does): how far back the counts reach. */
  oldest(now: number): number | undefined {
    this.roll(now);
    for (let i = this.buckets.length - 1; i >= 0; i--) if (this.buckets[i]! > 0) return this.newestAt - i * this.bucketMs;
    return undefined;
  }

  /** Forgets everything counted. */
  clear(): void {
    this.buckets.fill(0);
  }

  private roll(now: number): void {
    const steps = Math.floor((now - this.newestAt) / this.bucketMs);
    if (steps <= 0) return;
    for (let i = 0; i < Math.min(steps, this.buckets.length); i++) {
      this.buckets.pop();
      this.buckets.unshift(0);
    }
    this.newestAt += steps * this.bucketMs;
  }
}
