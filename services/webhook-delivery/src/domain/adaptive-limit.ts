/**
 * The adaptive limit of one destination in one process: how many requests may be open at once
 * (concurrency) and how many may start per second (rate), moved by the receiver's 429s. Additive
 * increase, multiplicative decrease (AIMD), as TCP does for a link, but only on a signal that
 * persists: the ordinary receiver answers a few percent 5xx or 429 at random, and each of those
 * only delays its own call (its Retry-After or backoff, domain/schedule.ts). Reacting to every one
 * compounds, at 100 requests/s, into a destination held near stopped (issue 31).
 *
 * - every 2xx adds 1/concurrency to the concurrency (one more per round of answers), up to the
 *   destination's maximum;
 * - sustained throttling cuts the concurrency by 30% and sets the rate to 90% of the answers per
 *   second that were not 429 (half of all answers when every one was a 429): 429s making up at
 *   least 10% of the answers of the last 2 s (and at least 5 of them), with at least 20 answers
 *   spread over most of the window; at most once per window, so that the next cut judges only
 *   answers to the lowered limit. A share of a few answers, or of a burst's first fraction of a
 *   second, is chance, and what passed in it is no measure of the receiver (a cut on the first
 *   answers of a destination in the noisy-errors bench held it to a few requests/s for a minute);
 *   429s that rare are handled by their calls' Retry-After alone;
 * - while a rate is in force it grows by 5% a second (at least 1/s) up to what the receiver let
 *   through when it was cut, its measured capacity, and above that by 1% a second (at least
 *   0.5/s), probing for more without overshooting into 429s again; it does not grow while more
 *   than 1% of the last 2 s's answers are 429s;
 * - while a rate is in force, 429s above 3% of the window's answers (and at least 5 of them),
 *   sustained as for a cut, trim it, at most once per window: the capacity becomes what got
 *   through over the window if that is less, and the rate at most the capacity. Growth stops at
 *   1%, but the window lags the rate, and a cut's window may straddle a burst and measure too much:
 *   a rate a few percent above a receiver's limit held 6-8% of its answers at 429 in the
 *   integration test, below the cut's 10%, for as long as it was in force. A trim is no cut: it
 *   moves neither the concurrency nor when the rate probes; 2% of 429s at random rarely reach 3%
 *   (11% of the windows of 200 answers), and then take only the 2% that did not get through;
 * - a minute without a cut and the rate probes: it grows by 5% a second, compounded, whatever the
 *   429s below the cut's threshold say, with no trim. A receiver that still limits soon answers
 *   enough 429s for a cut (which measures its capacity again); past twice the capacity without
 *   one, the rate goes back to the destination's own maximum (none). 429s below the threshold, now
 *   and then, do not keep it; and a receiver that limits sees no burst each minute, as it would if
 *   the rate were simply dropped.
 *
 * Failures move neither: 5xx (503 included) and timeouts are the breaker's business
 * (domain/breaker.ts), and a lane whose requests turn slow is the gate's. Timeouts in particular
 * say little about the concurrency a receiver takes: each holds its request for the whole
 * timeout, so a receiver that hangs 3% of requests at random needs more open at once, not fewer.
 * Pure: every change takes the time as an argument.
 */
import type { AnswerSignal } from './answer-signal.js';
import { SlidingCount } from './sliding-count.js';

export interface LimitCaps {
  /** maxConcurrentRequests (or DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION). */
  readonly maxConcurrency: number;
  /** maxRequestsPerSecond; Infinity when the destination sets none. */
  readonly maxRate: number;
}

/** The window a share of answers is judged over, and the shortest time between two cuts. */
const SIGNAL_WINDOW_MS = 2000;
/** The share of 429s in the window that is throttling rather than chance. */
const THROTTLE_SHARE = 0.1;
/** While 429s are more than this share of the window's answers, the rate does not grow. */
const GROWTH_STOP_SHARE = 0.01;
/**
 * While a rate is in force, 429s above this share trim it to what got through. Above the 2% a
 * receiver answers at random, so that such noise rarely trims (11% of the windows of 200 answers).
 */
const TRIM_SHARE = 0.03;
/** Fewer answers than this in the window are too few for a share to mean anything. */
const MIN_ANSWERS = 20;
/** Fewer 429s than this in the window are chance, whatever their share. */
const MIN_THROTTLED = 5;
/** The answers must reach this far back in the window: sustained, and a rate measured over time. */
const MIN_SPAN_MS = 1500;
const PROBE_AFTER_MS = 60_000;
/** How fast the rate grows, compounded, once probing: from the capacity to twice it in 14 s. */
const PROBE_GROWTH_PER_S = 0.05;
const MIN_RATE = 1;
const BUCKET_MS = 200;
const BUCKETS = SIGNAL_WINDOW_MS / BUCKET_MS;

export class AdaptiveLimit {
  private concurrencyNow: number;
  private rateNow: number;
  private caps: LimitCaps;
  private lastCutAt = Number.NEGATIVE_INFINITY;
  private lastTrimAt = Number.NEGATIVE_INFINITY;
  private lastGrowAt = 0;
  /** Requests per second the receiver let through when the rate was last cut. */
  private capacity = Number.POSITIVE_INFINITY;
  private readonly answers = new SlidingCount(BUCKET_MS, BUCKETS);
  private readonly throttles = new SlidingCount(BUCKET_MS, BUCKETS);

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
    this.capacity = Number.POSITIVE_INFINITY;
    this.lastCutAt = Number.NEGATIVE_INFINITY;
    this.lastTrimAt = Number.NEGATIVE_INFINITY;
    this.answers.clear();
    this.throttles.clear();
  }

  /** One answer (or timeout) at `now`. */
  observe(signal: AnswerSignal, now: number): void {
    this.answers.add(now);
    if (signal === 'ok') {
      this.concurrencyNow = Math.min(this.caps.maxConcurrency, this.concurrencyNow + 1 / Math.max(1, this.concurrencyNow));
      this.grow(now);
    } else if (signal === 'throttled') {
      this.throttles.add(now);
      if (now - Math.max(this.lastCutAt, this.lastTrimAt) < SIGNAL_WINDOW_MS) return;
      const spanMs = now - (this.answers.oldest(now) ?? now);
      if (spanMs < MIN_SPAN_MS) return;
      if (this.sustained(now, THROTTLE_SHARE)) this.cut(now, spanMs);
      else if (Number.isFinite(this.capacity) && !this.probing(now) && this.sustained(now, TRIM_SHARE)) this.trim(now, spanMs);
    }
  }

  private sustained(now: number, share: number): boolean {
    const answered = this.answers.total(now);
    const throttled = this.throttles.total(now);
    return answered >= MIN_ANSWERS && throttled >= MIN_THROTTLED && throttled >= share * answered;
  }

  /** Requests per second that were not 429s over the last `spanMs`. */
  private admitted(now: number, spanMs: number): number {
    return (this.answers.total(now) - this.throttles.total(now)) / (spanMs / 1000);
  }

  private trim(now: number, spanMs: number): void {
    this.lastTrimAt = now;
    this.lastGrowAt = now;
    // A cut measures the capacity over a window that may straddle a burst: a receiver that still
    // refuses 3% below it let less through than that, and what it lets through now is the measure.
    this.capacity = Math.max(MIN_RATE, Math.min(this.capacity, this.admitted(now, spanMs)));
    this.rateNow = Math.min(this.rateNow, this.capacity);
  }

  private cut(now: number, spanMs: number): void {
    this.lastCutAt = now;
    this.lastGrowAt = now;
    this.concurrencyNow = Math.max(1, this.concurrencyNow * 0.7);
    const admitted = this.admitted(now, spanMs);
    // What the receiver let through is its capacity; when it let nothing through, back off by half.
    this.capacity = admitted > 0 ? admitted : (0.5 * this.answers.total(now)) / (spanMs / 1000);
    const base = admitted > 0 ? 0.9 * admitted : this.capacity;
    this.rateNow = Math.max(MIN_RATE, Math.min(this.rateNow, base, this.caps.maxRate));
  }

  private grow(now: number): void {
    if (this.rateNow === this.caps.maxRate) return;
    const elapsedS = Math.max(0, now - this.lastGrowAt) / 1000;
    this.lastGrowAt = now;
    if (this.probing(now)) {
      // A minute without a cut: the receiver may have lifted its limit, or the 429s since were
      // chance. Past twice the capacity without a cut, they were: the rate is gone.
      if (this.rateNow >= 2 * this.capacity) {
        this.rateNow = this.caps.maxRate;
        this.capacity = Number.POSITIVE_INFINITY;
        return;
      }
      this.rateNow = Math.min(this.caps.maxRate, this.rateNow * (1 + PROBE_GROWTH_PER_S * elapsedS));
      return;
    }
    // Not while the receiver still refuses some: growing into 429s just under the cut's threshold
    // held 8-10% of a per-second limiter's answers at 429 in the integration test.
    if (this.throttles.total(now) > GROWTH_STOP_SHARE * this.answers.total(now)) return;
    const step = this.rateNow < this.capacity ? Math.max(1, this.rateNow * 0.05) : Math.max(0.5, this.rateNow * 0.01);
    this.rateNow = Math.min(this.caps.maxRate, this.rateNow + elapsedS * step);
  }

  /** A minute after the last cut: the rate grows fast to find whether the limit is still there. */
  private probing(now: number): boolean {
    return now - this.lastCutAt >= PROBE_AFTER_MS;
  }
}
