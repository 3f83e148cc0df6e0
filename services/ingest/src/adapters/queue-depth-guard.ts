/**
 * Keeps the intake from burying a stalled router: the waiting count of the route queue is polled
 * in the background, so the hot path only reads a boolean.
 */
import type { Queue } from 'bullmq';
import { BackgroundSample } from './background-sample.js';

export class QueueDepthGuard {
  private readonly waiting: BackgroundSample<number>;

  constructor(
    queue: Pick<Queue, 'getWaitingCount'>,
    /** 0 turns the guard off. */
    private readonly maxWaitingJobs: number,
    intervalMs = 500,
  ) {
    this.waiting = new BackgroundSample(0, () => queue.getWaitingCount(), intervalMs);
  }

  /** Starts polling without waiting for the first count (the intake may start before the router). */
  start(): void {
    if (this.maxWaitingJobs > 0) void this.waiting.start();
  }

  stop(): void {
    this.waiting.stop();
  }

  get overLimit(): boolean {
    return this.maxWaitingJobs > 0 && this.waiting.current >= this.maxWaitingJobs;
  }

  get depth(): number {
    return this.waiting.current;
  }
}
