/**
 * A value read from Redis in the background (every 500 ms by default), so the hot path only reads
 * the last one. A failed read keeps the previous value: the guards built on it fall back to what
 * they last saw, and an unreachable Redis is answered 503 by the writer anyway.
 */
export class BackgroundSample<T> {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private value: T,
    /** The next value; undefined keeps the current one. */
    private readonly read: () => Promise<T | undefined>,
    private readonly intervalMs = 500,
  ) {}

  get current(): T {
    return this.value;
  }

  /** Starts sampling; resolves after the first read. */
  async start(): Promise<void> {
    await this.sample();
    this.timer = setInterval(() => void this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sample(): Promise<void> {
    try {
      const next = await this.read();
      if (next !== undefined) this.value = next;
    } catch {
      // Keep the last value (see above).
    }
  }
}
