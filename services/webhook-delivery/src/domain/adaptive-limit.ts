/**
 * The adaptive limit of one destination in one process: how many requests may be open at once
 * (concurrency) and how many may start per second (rate), moved by what the receiver answers.
 * Additive increase, multiplicative decrease (AIMD), as TCP does for a link:
 *
 * - every 2xx adds 1/concurrency to the concurrency (one more per round of answers), up to the
 *   destination's maximum; while a rate is in force, it grows by 5% a second (at least 1/s);
 * - a 429 or 503 (at most one cut a second: the answers of one burst are one signal) cuts the
 *   concurrency by 30% and sets the rate to 90% of the 2xx the receiver accepted in the last
 *   second; when it accepted none, a 429 sets it to half of what was sent, while a 503 sets none
 *   (a receiver that accepts nothing is down, not busy: that is the breaker's business);
 * - a timeout halves the concurrency (at most once a second).
 *
 * The rate starts unlimited and goes back to the destination's own maximum after a minute without
 * a 429 or 503. Pure: every change takes the time as an argument.
 */
import type { AnswerSignal } from './answer-signal.js';
import { SlidingCount } from './sliding-count.js';

export interface LimitCaps {
  /** maxConcurrentRequests (or DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION). */
  readonly maxConcurrency: number;
  /** maxRequestsPerSecond; Infinity when the destination sets none. */
  readonly maxRate: number;
}

const CUT_EVERY_MS = 1000;
const RATE_FORGOTTEN_AFTER_MS = 60_000;
const MIN_RATE = 1;
const BUCKET_MS = 100;
const BUCKETS = 10;

export class AdaptiveLimit {
  private concurrencyNow: number;
  private rateNow: number;
  private caps: LimitCaps;
  private lastCutAt = Number.NEGATIVE_INFINITY;
  private lastThrottleAt = Number.NEGATIVE_INFINITY;
  private lastGrowAt = 0;
  /** 2xx and all answers over the last second. */
  private readonly oks = new SlidingCount(BUCKET_MS, BUCKETS);
  private readonly answers = new SlidingCount(BUCKET_MS, BUCKETS);

  constructor(caps: LimitCaps) {
    this.caps = caps;
    this.concurrencyNow = caps.maxConcurrency;
    this.rateNow = caps.maxRate;
  }

  /** Whole requests that may be open at once. */
  get concurrency(): number {
    return Math.max(1, Math.floor(this.concurrencyNow));
  }

  /** Requests per second that may start; Infinity when none is in force. */
  get rate(): number {
    return this.rateNow;
  }

  /** The destination's settings changed (or were read again): the limits stay within them. */
  setCaps(caps: LimitCaps): void {
    if (caps.maxConcurrency === this.caps.maxConcurrency && caps.maxRate === this.caps.maxRate) return;
    this.caps = caps;
    this.concurrencyNow = Math.min(this.concurrencyNow, caps.maxConcurrency);
    this.rateNow = Math.min(this.rateNow, caps.maxRate);
  }

  /** Back to the destination's maximums: a receiver that just recovered (the breaker closed). */
  reset(): void {
    this.concurrencyNow = this.caps.maxConcurrency;
    this.rateNow = this.caps.maxRate;
    this.lastThrottleAt = Number.NEGATIVE_INFINITY;
  }

  /** One answer (or timeout) at `now`; `status` the HTTP status when one came. */
  observe(signal: AnswerSignal, now: number, status?: number): void {
    this.answers.add(now);
    if (signal === 'ok') {
      this.oks.add(now);
      this.concurrencyNow = Math.min(this.caps.maxConcurrency, this.concurrencyNow + 1 / Math.max(1, this.concurrencyNow));
      this.grow(now);
      return;
    }
    if (signal !== 'throttled' && signal !== 'overloaded') return;
    if (signal === 'throttled') this.lastThrottleAt = now;
    if (now - this.lastCutAt < CUT_EVERY_MS) return;
    this.lastCutAt = now;
    this.lastGrowAt = now;
    if (signal === 'overloaded') {
      this.concurrencyNow = Math.max(1, this.concurrencyNow / 2);
      return;
    }
    this.concurrencyNow = Math.max(1, this.concurrencyNow * 0.7);
    const accepted = this.oks.total(now);
    if (accepted === 0 && status !== 429) return;
    const base = accepted > 0 ? 0.9 * accepted : 0.5 * this.answers.total(now);
    this.rateNow = Math.max(MIN_RATE, Math.min(this.rateNow, base));
  }

  private grow(now: number): void {
    if (this.rateNow === this.caps.maxRate) return;
    if (now - this.lastThrottleAt >= RATE_FORGOTTEN_AFTER_MS) {
      this.rateNow = this.caps.maxRate;
      return;
    }
    const elapsed = Math.max(0, now - this.lastGrowAt);
    this.lastGrowAt = now;
    if (now - this.lastCutAt < CUT_EVERY_MS) return;
    this.rateNow = Math.min(this.caps.maxRate, this.rateNow + (elapsed / 1000) * Math.max(1, this.rateNow * 0.05));
  }
}
