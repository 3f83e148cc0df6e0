/**
 * Keeps the intake from burying a stalled router: the waiting count of the route queue is polled
 * in the background, so the hot path only reads a boolean.
 */
import type { Queue } from 'bullmq';

export class QueueDepthGuard {
  private waiting = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly queue: Pick<Queue, 'getWaitingCount'>,
    /** 0 turns the guard off. */
    private readonly maxWaitingJobs: number,
    private readonly intervalMs = 500,
  ) {}

  start(): void {
    if (this.maxWaitingJobs === 0) return;
    const poll = () =>
      this.queue.getWaitingCount().then(
        (n) => void (this.waiting = n),
        () => undefined,
      );
    void poll();
    this.timer = setInterval(() => void poll(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  get overLimit(): boolean {
    return this.maxWaitingJobs > 0 && this.waiting >= this.maxWaitingJobs;
  }

  get depth(): number {
    return this.waiting;
  }
}
