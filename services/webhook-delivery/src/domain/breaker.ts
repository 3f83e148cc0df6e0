/**
 * The circuit breaker of one destination in one process (docs/delivery.md, "The circuit breaker").
 *
 *            ≥ MIN_ATTEMPTS answers in the last WINDOW_MS, at least FAILURE_RATIO failures,
 *            or the last MIN_ATTEMPTS answers all failures, within WINDOW_MS
 *   closed ───────────────────────────────────────────────────────────────────────────────▶ open
 *     ▲                                                                                    │  ▲
 *     │ any 2xx (the probe's, or a request sent before it opened)   probe due: one request │  │ the probe failed:
 *     └──────────────────────────────────────────────────── probing ◀──────────────────────┘  │ next one twice as late,
 *                                                              └─────────────────────────────────┘ at most MAX_PROBE_MS
 *
 * While it is not closed, calls wait where they are (their retry state and windows unchanged, no
 * attempt counted) and exactly one request at a time goes out as the probe. Pure: the time is an
 * argument; which job carries the probe, and what waits how long, is the gate's business.
 */
import { breakerFailure, type AnswerSignal } from './answer-signal.js';
import { SlidingCount } from './sliding-count.js';

const WINDOW_MS = 10_000;
export const MIN_ATTEMPTS = 20;
const FAILURE_RATIO = 0.5;
export const FIRST_PROBE_MS = 1000;
// A receiver back is noticed within this (the time to recover after an outage starts with it); a
// probe every 2 s is no load on one still down.
export const MAX_PROBE_MS = 2000;
const BUCKET_MS = 1000;
const BUCKETS = WINDOW_MS / BUCKET_MS;

export type BreakerState = 'closed' | 'open' | 'probing';
export type BreakerChange = 'opened' | 'closed' | undefined;
export type Admission = { readonly kind: 'go' } | { readonly kind: 'probe' } | { readonly kind: 'wait'; readonly probeAt: number };

export class Breaker {
  private stateNow: BreakerState = 'closed';
  private openedAtMs = 0;
  private probeAtMs = 0;
  private probeDelay = FIRST_PROBE_MS;
  private readonly answers = new SlidingCount(BUCKET_MS, BUCKETS);
  private readonly failures = new SlidingCount(BUCKET_MS, BUCKETS);
  /**
   * Failures in a row, and when the first came. After a healthy spell the window still holds its
   * 2xx, so the ratio alone opens on a receiver gone down only after half the window (5 s), every
   * request meanwhile sent and failed; MIN_ATTEMPTS in a row open it at once. At 10% random
   * failures such a run is a 1-in-10^20 event. It counts within WINDOW_MS of its first failure:
   * a destination too quiet for the window's minimum is not opened by a slow run either.
   */
  private streak = 0;
  private streakFromMs = 0;
  private closings = 0;

  get state(): BreakerState {
    return this.stateNow;
  }

  /** How often it closed since start: a job that saw it change while it ran was held by it. */
  get closes(): number {
    return this.closings;
  }

  /** When it last opened (epoch ms); meaningful while not closed. */
  get openedAt(): number {
    return this.openedAtMs;
  }

  /** When the next probe may go (epoch ms); meaningful while not closed. */
  get probeAt(): number {
    return this.probeAtMs;
  }

  /**
   * Whether a job may send now: `go` while closed; while open, `probe` once the probe is due (the
   * breaker is then probing until its answer comes back), else `wait` until `probeAt`.
   */
  admit(now: number): Admission {
    if (this.stateNow === 'closed') return { kind: 'go' };
    if (this.stateNow === 'open' && now >= this.probeAtMs) {
      this.stateNow = 'probing';
      return { kind: 'probe' };
    }
    return { kind: 'wait', probeAt: this.stateNow === 'probing' ? now : this.probeAtMs };
  }

  /**
   * One answer. `probe`: it is the probe's. Returns the change it made: any 2xx closes the
   * breaker; a failed probe sets the next one twice as late; failures over the window open it.
   */
  observe(signal: AnswerSignal, now: number, probe = false): BreakerChange {
    if (signal === 'ok') {
      if (this.stateNow === 'closed') {
        this.answers.add(now);
        this.streak = 0;
        return undefined;
      }
      this.close();
      return 'closed';
    }
    const failure = breakerFailure(signal);
    if (this.stateNow !== 'closed') {
      if (probe) {
        // A probe answered without a 2xx: the receiver is not back (a 429 or 4xx included).
        this.probeDelay = Math.min(MAX_PROBE_MS, this.probeDelay * 2);
        this.probeAtMs = now + this.probeDelay;
        this.stateNow = 'open';
      }
      return undefined;
    }
    this.answers.add(now);
    if (failure) this.failures.add(now);
    if (!failure) this.streak = 0;
    else if (this.streak === 0 || now - this.streakFromMs > WINDOW_MS) {
      this.streak = 1;
      this.streakFromMs = now;
    } else this.streak++;
    if (failure && (this.failingOverWindow(now) || this.streak >= MIN_ATTEMPTS)) {
      this.stateNow = 'open';
      this.openedAtMs = now;
      this.probeDelay = FIRST_PROBE_MS;
      this.probeAtMs = now + FIRST_PROBE_MS;
      return 'opened';
    }
    return undefined;
  }

  /** At least MIN_ATTEMPTS answers in the window, FAILURE_RATIO of them failures. */
  private failingOverWindow(now: number): boolean {
    const total = this.answers.total(now);
    return total >= MIN_ATTEMPTS && this.failures.total(now) >= FAILURE_RATIO * total;
  }

  /** The probe was not sent after all (the process is stopping): another job may carry it. */
  probeNotSent(): void {
    if (this.stateNow === 'probing') this.stateNow = 'open';
  }

  private close(): void {
    this.stateNow = 'closed';
    this.closings++;
    this.answers.clear();
    this.failures.clear();
    this.streak = 0;
  }
}
