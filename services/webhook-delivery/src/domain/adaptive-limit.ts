/**
 * The adaptive limit of one destination in one process: how many requests may be open at once
 * (concurrency) and how many may start per second (rate), moved by what the receiver answers.
 * Additive increase, multiplicative decrease (AIMD), as TCP does for a link, but only on signals
 * that persist: the ordinary receiver answers a few percent 5xx or 429 at random, and each of
 * those only delays its own call (its Retry-After or backoff, domain/schedule.ts). Reacting to
 * every one compounds, at 100 requests/s, into a destination held near stopped (issue 31).
 *
 * - every 2xx adds 1/concurrency to the concurrency (one more per round of answers), up to the
 *   destination's maximum; while a rate is in force, it grows by 5% a second (at least 1/s);
 * - sustained throttling, 429s making up at least 10% of the answers of the last 2 s (and at
 *   least 3 of them), cuts the concurrency by 30% and sets the rate to 90% of the answers per
 *   second that were not 429 (half of all answers when every one was a 429);
 * - sustained timeouts, at least 20% of the answers of the last 2 s (and at least 3), halve the
 *   concurrency;
 * - each reaction happens at most once per window, so that the next one judges only answers to
 *   the lowered limit.
 *
 * 5xx (503 included) move neither: failures are the breaker's business (domain/breaker.ts). The
 * rate starts unlimited and goes back to the destination's own maximum after a minute without a
 * 429. Pure: every change takes the time as an argument.
 */
import type { AnswerSignal } from './answer-signal.js';
import { SlidingCount } from './sliding-count.js';

export interface LimitCaps {
  /** maxConcurrentRequests (or DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION). */
  readonly maxConcurrency: number;
  /** maxRequestsPerSecond; Infinity when the destination sets none. */
  readonly maxRate: number;
}

/** The window a share of answers is judged over, and the shortest time between two reactions. */
export const SIGNAL_WINDOW_MS = 2000;
/** The share of 429s in the window that is throttling rather than chance. */
export const THROTTLE_SHARE = 0.1;
/** The share of timeouts in the window that is overload rather than chance. */
export const TIMEOUT_SHARE = 0.2;
/** Fewer than this many 429s (or timeouts) in the window are never sustained, whatever their share. */
export const MIN_SIGNALS = 3;
const RATE_FORGOTTEN_AFTER_MS = 60_000;
const MIN_RATE = 1;
const BUCKET_MS = 200;
const BUCKETS = SIGNAL_WINDOW_MS / BUCKET_MS;
/** The shortest span an observed rate is measured over: a first burst is not a rate. */
const MIN_SPAN_MS = 1000;

export class AdaptiveLimit {
  private concurrencyNow: number;
  private rateNow: number;
  private caps: LimitCaps;
  private lastRateCutAt = Number.NEGATIVE_INFINITY;
  private lastConcurrencyCutAt = Number.NEGATIVE_INFINITY;
  private lastThrottleAt = Number.NEGATIVE_INFINITY;
  private lastGrowAt = 0;
  /** When the window first held an answer: before a whole window has passed, rates are measured over less. */
  private firstAnswerAt: number | undefined;
  private readonly answers = new SlidingCount(BUCKET_MS, BUCKETS);
  private readonly throttles = new SlidingCount(BUCKET_MS, BUCKETS);
  private readonly timeouts = new SlidingCount(BUCKET_MS, BUCKETS);

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
    this.firstAnswerAt = undefined;
    this.answers.clear();
    this.throttles.clear();
    this.timeouts.clear();
  }

  /** One answer (or timeout) at `now`. */
  observe(signal: AnswerSignal, now: number): void {
    this.firstAnswerAt ??= now;
    this.answers.add(now);
    if (signal === 'ok') {
      this.concurrencyNow = Math.min(this.caps.maxConcurrency, this.concurrencyNow + 1 / Math.max(1, this.concurrencyNow));
      this.grow(now);
    } else if (signal === 'throttled') {
      this.lastThrottleAt = now;
      this.throttles.add(now);
      if (now - this.lastRateCutAt >= SIGNAL_WINDOW_MS && this.sustained(this.throttles, THROTTLE_SHARE, now)) this.cutRate(now);
    } else if (signal === 'overloaded') {
      this.timeouts.add(now);
      if (now - this.lastConcurrencyCutAt >= SIGNAL_WINDOW_MS && this.sustained(this.timeouts, TIMEOUT_SHARE, now)) {
        this.lastConcurrencyCutAt = now;
        this.concurrencyNow = Math.max(1, this.concurrencyNow / 2);
      }
    }
  }

  private sustained(signals: SlidingCount, share: number, now: number): boolean {
    const n = signals.total(now);
    return n >= MIN_SIGNALS && n >= share * this.answers.total(now);
  }

  private cutRate(now: number): void {
    this.lastRateCutAt = now;
    this.lastGrowAt = now;
    this.concurrencyNow = Math.max(1, this.concurrencyNow * 0.7);
    const spanS = Math.min(SIGNAL_WINDOW_MS, Math.max(MIN_SPAN_MS, now - (this.firstAnswerAt ?? now))) / 1000;
    const answered = this.answers.total(now);
    const admitted = answered - this.throttles.total(now);
    // What the receiver let through is its rate; when it let nothing through, back off by half.
    const base = admitted > 0 ? (0.9 * admitted) / spanS : (0.5 * answered) / spanS;
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
    this.rateNow = Math.min(this.caps.maxRate, this.rateNow + (elapsed / 1000) * Math.max(1, this.rateNow * 0.05));
  }
}
