/**
 * The retry rules of docs/spec.md §4 as pure functions of the clock: which URLs are due, and what
 * an attempt round means for the message. Every delay is computed from `now` and an injected
 * random source, so the schedule is exact under test.
 */
import type { RetryState, UrlRetryState } from '@eventrelay/config';
import type { Outcome } from './outcome.js';

export interface RetryPolicy {
  /** How long after the first attempt a message may still be retried (RETRY_WINDOW_MS). */
  readonly windowMs: number;
  /** The first backoff ceiling; it doubles per round up to maxDelayMs. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { windowMs: 4 * 60 * 60 * 1000, baseDelayMs: 1000, maxDelayMs: 30 * 60 * 1000 };

/**
 * Exponential backoff with full jitter: a uniform draw from [0, min(max, base * 2^(round-1))).
 * Full jitter spreads the retries of many messages that failed together (a receiver outage), so
 * they do not return as one wave when it recovers.
 */
export function backoffDelay(round: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(round - 1, 40));
  return Math.floor(random() * ceiling);
}

/**
 * The URLs to try in this round: every configured URL that has not failed permanently and whose
 * wait has passed. A URL added to the destination since the last round is due at once, so an
 * operator who fixes a wrong URL sees pending messages go to the new one.
 */
export function dueUrls(urls: readonly string[], state: RetryState | undefined, now: number): string[] {
  return urls.filter((url) => {
    const s = state?.urls[url];
    return s === undefined || (!s.failed && (s.notBefore ?? 0) <= now);
  });
}

export interface UrlResult {
  readonly url: string;
  readonly outcome: Outcome;
}

export type Decision =
  | { readonly kind: 'delivered'; readonly url: string; readonly attempt: number }
  | { readonly kind: 'retry'; readonly at: number; readonly state: RetryState }
  | { readonly kind: 'dead'; readonly reason: string; readonly state: RetryState };

export interface RoundInput {
  /** The destination's URLs as configured now. */
  readonly urls: readonly string[];
  /** What earlier rounds left; undefined before the first. */
  readonly state: RetryState | undefined;
  /** This round's results; empty when nothing was due (the job ran early). */
  readonly results: readonly UrlResult[];
  /** When this round started. */
  readonly startedAt: number;
  readonly now: number;
  readonly policy: RetryPolicy;
  readonly random: () => number;
}

/**
 * One success ends the message. Otherwise permanently failed URLs are never tried again,
 * retryable ones wait for the backoff (or longer when the receiver's Retry-After asks for it, but
 * never past the window's end), and the message is dead once no URL can be tried again: all
 * failed permanently, or the window has passed.
 */
export function decideRound(input: RoundInput): Decision {
  const { state, results, now, policy } = input;
  const attempt = (state?.attempt ?? 0) + (results.length > 0 ? 1 : 0);
  const won = results.find((r) => r.outcome.kind === 'success');
  if (won) return { kind: 'delivered', url: won.url, attempt };

  const firstAttemptAt = state?.firstAttemptAt ?? input.startedAt;
  const deadline = firstAttemptAt + policy.windowMs;
  const backoffUntil = Math.min(now + backoffDelay(Math.max(attempt, 1), policy, input.random), deadline);
  const urls: Record<string, UrlRetryState> = {};
  for (const url of input.urls) {
    const previous = state?.urls[url];
    if (previous) urls[url] = previous;
  }
  for (const { url, outcome } of results) {
    if (!input.urls.includes(url)) continue;
    if (outcome.kind === 'permanent') {
      urls[url] = { lastError: outcome.error, failed: true };
    } else if (outcome.kind === 'retryable') {
      // Retry-After is honoured, bounded by the window: a wait that would end after it is cut
      // to the window's end, where the URL gets its last attempt.
      const asked = outcome.retryAfterMs === undefined ? backoffUntil : Math.max(backoffUntil, now + outcome.retryAfterMs);
      urls[url] = { lastError: outcome.error, notBefore: Math.min(asked, deadline) };
    }
  }
  const next: RetryState = { firstAttemptAt, attempt: Math.max(attempt, 1), urls };
  const pending = input.urls.filter((url) => !urls[url]?.failed);
  if (pending.length === 0) return { kind: 'dead', reason: lastError(results, urls, 'every URL failed permanently'), state: next };
  if (now >= deadline)
    return {
      kind: 'dead',
      reason: `retry window of ${formatDuration(policy.windowMs)} passed; last error: ${lastError(results, urls, 'none')}`,
      state: next,
    };
  const at = Math.min(...pending.map((url) => urls[url]?.notBefore ?? now));
  return { kind: 'retry', at, state: next };
}

/**
 * A retry brought forward to `at` at the latest: every URL waiting past it is due then. For the
 * call a breaker's probe failed on: it goes again with the next probe, or when the breaker closes.
 */
export function retryBy(decision: Extract<Decision, { kind: 'retry' }>, at: number): Decision {
  const urls: Record<string, UrlRetryState> = {};
  for (const [url, s] of Object.entries(decision.state.urls))
    urls[url] = s.failed || s.notBefore === undefined || s.notBefore <= at ? s : { ...s, notBefore: at };
  return { kind: 'retry', at: Math.min(decision.at, at), state: { ...decision.state, urls } };
}

function lastError(results: readonly UrlResult[], urls: Record<string, UrlRetryState>, fallback: string): string {
  const fromRound = results
    .map((r) => (r.outcome.kind === 'success' ? undefined : `${r.url}: ${r.outcome.error}`))
    .filter((e) => e !== undefined);
  if (fromRound.length > 0) return fromRound.join('; ');
  const kept = Object.entries(urls).map(([url, s]) => `${url}: ${s.lastError}`);
  return kept.length > 0 ? kept.join('; ') : fallback;
}

/** `4 h`, `30 min`, `1.5 s`: a window as reasons and logs name it. */
function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}
