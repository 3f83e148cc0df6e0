/**
 * The flushes of a buffered writer (attempt log, debugger events, stats counters), one after
 * another, so a flush's promise settles only once it and every earlier one are in Redis. A failed
 * write is reported to `onError`, never thrown: these buffers are for people, and the queues are
 * what guarantee delivery.
 */
export class WriteChain {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly onError?: (err: unknown) => void) {}

  /** Runs the writes (together) after the earlier ones; resolves when they are done. */
  add(writes: readonly (() => Promise<unknown>)[]): Promise<void> {
    if (writes.length === 0) return this.tail;
    this.tail = this.tail.then(() =>
      Promise.all(writes.map((write) => write())).then(
        () => undefined,
        (err: unknown) => this.onError?.(err),
      ),
    );
    return this.tail;
  }
}
