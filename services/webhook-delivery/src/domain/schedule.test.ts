import type { RetryState } from '@eventrelay/config';
import type { Outcome } from './outcome.js';
import {
  DEFAULT_RETRY_POLICY,
  backoffDelay,
  decideRound,
  dueUrls,
  type Decision,
  type RetryPolicy,
  type RoundInput,
  type UrlResult,
} from './schedule.js';
import { seededRandom } from '../../../../test/support/seeded-random';

const HOUR = 3_600_000;
const MIN = 60_000;
const T0 = Date.parse('2026-11-21T09:30:00.000Z');
const policy: RetryPolicy = { windowMs: 4 * HOUR, baseDelayMs: 1000, maxDelayMs: 30 * MIN };
const DEADLINE = T0 + policy.windowMs;

const A = 'https://a.example/hook';
const B = 'https://b.example/hook';
const C = 'https://c.example/hook';

const fixed = (value: number) => () => value;
/** Just below 1, the largest value a [0, 1) source hands out in practice. */
const almostOne = 1 - 2 ** -40;

const http500: Outcome = { kind: 'retryable', error: 'HTTP 500', status: 500 };
const http404: Outcome = { kind: 'permanent', error: 'HTTP 404', status: 404 };
const ok: Outcome = { kind: 'success', status: 200 };
const retryAfter = (ms: number, status = 503): Outcome => ({ kind: 'retryable', error: `HTTP ${status}`, status, retryAfterMs: ms });
const result = (url: string, outcome: Outcome): UrlResult => ({ url, outcome });

function round(overrides: Partial<RoundInput>): Decision {
  return decideRound({ urls: [A], state: undefined, results: [], startedAt: T0, now: T0, policy, random: fixed(0.5), ...overrides });
}

function expectRetry(decision: Decision): Extract<Decision, { kind: 'retry' }> {
  if (decision.kind !== 'retry') throw new Error(`expected retry, got ${JSON.stringify(decision)}`);
  return decision;
}

function expectDead(decision: Decision): Extract<Decision, { kind: 'dead' }> {
  if (decision.kind !== 'dead') throw new Error(`expected dead, got ${JSON.stringify(decision)}`);
  return decision;
}

describe('backoffDelay', () => {
  it.each([
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [4, 8000],
    [10, 512_000],
    [11, 1_024_000],
    [12, 30 * MIN],
    [13, 30 * MIN],
    [100, 30 * MIN],
    [10_000, 30 * MIN],
  ])('round %i draws from [0, %i)', (n, ceiling) => {
    expect(backoffDelay(n, policy, fixed(0))).toBe(0);
    const top = backoffDelay(n, policy, fixed(almostOne));
    expect(top).toBeLessThan(ceiling);
    expect(top).toBe(ceiling - 1);
    expect(backoffDelay(n, policy, fixed(0.5))).toBe(ceiling / 2);
  });

  it('is full jitter: every draw is an integer inside [0, ceiling)', () => {
    const random = seededRandom(7);
    for (let n = 1; n <= 20; n++) {
      const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (n - 1));
      for (let i = 0; i < 200; i++) {
        const delay = backoffDelay(n, policy, random);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(ceiling);
      }
    }
  });

  it('never exceeds maxDelayMs, however many rounds', () => {
    expect(backoffDelay(1_000_000, policy, fixed(almostOne))).toBeLessThan(policy.maxDelayMs);
    expect(backoffDelay(1_000_000, policy, fixed(almostOne))).toBeGreaterThan(policy.maxDelayMs - 2);
  });

  it('uses the policy it is given', () => {
    const small: RetryPolicy = { windowMs: HOUR, baseDelayMs: 250, maxDelayMs: 1500 };
    expect(backoffDelay(1, small, fixed(0.5))).toBe(125);
    expect(backoffDelay(3, small, fixed(0.5))).toBe(500);
    expect(backoffDelay(4, small, fixed(0.5))).toBe(750);
  });

  it('the default policy is docs/spec.md §4: 4 hours, 1 s doubling to 30 min', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({ windowMs: 14_400_000, baseDelayMs: 1000, maxDelayMs: 1_800_000 });
  });
});

describe('dueUrls', () => {
  const state: RetryState = {
    firstAttemptAt: T0,
    attempt: 2,
    urls: {
      [A]: { lastError: 'HTTP 404', failed: true },
      [B]: { lastError: 'HTTP 500', notBefore: T0 + 5000 },
    },
  };

  it('is every URL before the first round', () => {
    expect(dueUrls([A, B, C], undefined, T0)).toEqual([A, B, C]);
  });

  it('leaves out URLs that failed permanently, even long after', () => {
    expect(dueUrls([A, B], state, T0 + 10 * HOUR)).toEqual([B]);
  });

  it('respects notBefore: not due one ms before, due at it and after', () => {
    expect(dueUrls([A, B], state, T0 + 4999)).toEqual([]);
    expect(dueUrls([A, B], state, T0 + 5000)).toEqual([B]);
    expect(dueUrls([A, B], state, T0 + 5001)).toEqual([B]);
  });

  it('treats a URL without notBefore that has not failed as due', () => {
    expect(dueUrls([A], { firstAttemptAt: T0, attempt: 1, urls: { [A]: { lastError: 'x' } } }, T0)).toEqual([A]);
  });

  it('makes a URL added since the last round due at once', () => {
    expect(dueUrls([A, B, C], state, T0 + 1)).toEqual([C]);
  });

  it('ignores state of URLs no longer configured', () => {
    expect(dueUrls([C], state, T0 + 10 * HOUR)).toEqual([C]);
  });
});

describe('decideRound', () => {
  describe('success', () => {
    it('ends the message on the first round', () => {
      expect(round({ results: [result(A, ok)] })).toEqual({ kind: 'delivered', url: A, attempt: 1 });
    });

    it('ends the message when any one URL succeeded, whatever the others did', () => {
      expect(round({ urls: [A, B, C], results: [result(A, http500), result(B, ok), result(C, http404)] })).toEqual({
        kind: 'delivered',
        url: B,
        attempt: 1,
      });
    });

    it('reports the round number of a later success', () => {
      const state: RetryState = { firstAttemptAt: T0, attempt: 6, urls: { [A]: { lastError: 'HTTP 500', notBefore: T0 + 100 } } };
      expect(round({ state, results: [result(A, ok)], startedAt: T0 + 100, now: T0 + 150 })).toEqual({
        kind: 'delivered',
        url: A,
        attempt: 7,
      });
    });
  });

  describe('permanent failures', () => {
    it('mark the URL failed and are never retried, while a retryable URL is', () => {
      const first = expectRetry(round({ urls: [A, B], results: [result(A, http404), result(B, http500)] }));
      expect(first.state.urls[A]).toEqual({ lastError: 'HTTP 404', failed: true });
      expect(first.state.urls[B]).toEqual({ lastError: 'HTTP 500', notBefore: T0 + 500 });
      expect(first.at).toBe(T0 + 500);
      expect(dueUrls([A, B], first.state, first.at)).toEqual([B]);
      // The failed URL keeps its verdict through later rounds it took no part in.
      const second = expectRetry(
        round({ urls: [A, B], state: first.state, results: [result(B, http500)], startedAt: first.at, now: first.at }),
      );
      expect(second.state.urls[A]).toEqual({ lastError: 'HTTP 404', failed: true });
      expect(dueUrls([A, B], second.state, DEADLINE)).toEqual([B]);
    });

    it('all permanent → dead at once, naming every URL and error', () => {
      const dead = expectDead(
        round({ urls: [A, B], results: [result(A, http404), result(B, { kind: 'permanent', error: 'tls_untrusted: self-signed' })] }),
      );
      expect(dead.reason).toContain(`${A}: HTTP 404`);
      expect(dead.reason).toContain(`${B}: tls_untrusted: self-signed`);
      expect(dead.state.urls).toEqual({
        [A]: { lastError: 'HTTP 404', failed: true },
        [B]: { lastError: 'tls_untrusted: self-signed', failed: true },
      });
      expect(dead.state.attempt).toBe(1);
    });

    it('the last retryable URL failing permanently later → dead', () => {
      const state: RetryState = {
        firstAttemptAt: T0,
        attempt: 3,
        urls: { [A]: { lastError: 'HTTP 404', failed: true }, [B]: { lastError: 'HTTP 500', notBefore: T0 + 9000 } },
      };
      const dead = expectDead(
        round({
          urls: [A, B],
          state,
          results: [result(B, { kind: 'permanent', error: 'HTTP 410', status: 410 })],
          startedAt: T0 + 9000,
          now: T0 + 9100,
        }),
      );
      expect(dead.reason).toContain('HTTP 410');
      expect(dead.state.attempt).toBe(4);
    });
  });

  describe('retryable failures', () => {
    it('retry at now + the round backoff, with the error kept', () => {
      const decision = expectRetry(round({ results: [result(A, http500)], startedAt: T0, now: T0 + 40 }));
      // round 1: ceiling 1000 ms, random 0.5 → 500 ms after the round ended
      expect(decision.at).toBe(T0 + 40 + 500);
      expect(decision.state).toEqual({ firstAttemptAt: T0, attempt: 1, urls: { [A]: { lastError: 'HTTP 500', notBefore: T0 + 540 } } });
    });

    it('the backoff doubles per round', () => {
      const ats: number[] = [];
      let state: RetryState | undefined;
      let now = T0;
      for (let i = 0; i < 5; i++) {
        const decision = expectRetry(round({ state, results: [result(A, http500)], startedAt: now, now, random: fixed(0.5) }));
        ats.push(decision.at - now);
        state = decision.state;
        now = decision.at;
      }
      expect(ats).toEqual([500, 1000, 2000, 4000, 8000]);
    });

    it('random 0 retries immediately (full jitter), random → 1 just before the ceiling', () => {
      expect(expectRetry(round({ results: [result(A, http500)], random: fixed(0) })).at).toBe(T0);
      expect(expectRetry(round({ results: [result(A, http500)], random: fixed(almostOne) })).at).toBe(T0 + 999);
    });

    it('each URL keeps the error of its own last attempt', () => {
      const decision = expectRetry(
        round({
          urls: [A, B],
          results: [result(A, http500), result(B, { kind: 'retryable', error: 'timeout: no complete response within 5000 ms' })],
        }),
      );
      expect(decision.state.urls[A]?.lastError).toBe('HTTP 500');
      expect(decision.state.urls[B]?.lastError).toBe('timeout: no complete response within 5000 ms');
    });
  });

  describe('Retry-After', () => {
    it('is honoured when it asks for longer than the backoff', () => {
      const decision = expectRetry(round({ results: [result(A, retryAfter(120_000))], now: T0 + 10 }));
      expect(decision.at).toBe(T0 + 10 + 120_000);
      expect(decision.state.urls[A]).toEqual({ lastError: 'HTTP 503', notBefore: T0 + 10 + 120_000 });
    });

    it('does not shorten the backoff: notBefore = max(backoff, now + Retry-After)', () => {
      const state: RetryState = { firstAttemptAt: T0, attempt: 5, urls: { [A]: { lastError: 'HTTP 500', notBefore: T0 } } };
      // round 6: ceiling 32 s, random 0.5 → 16 s, longer than the 1 s asked for
      const decision = expectRetry(round({ state, results: [result(A, retryAfter(1000, 429))] }));
      expect(decision.at).toBe(T0 + 16_000);
      expect(expectRetry(round({ results: [result(A, retryAfter(0))] })).at).toBe(T0 + 500);
    });

    it('applies per URL: the message comes back at the earliest pending URL', () => {
      const decision = expectRetry(round({ urls: [A, B], results: [result(A, retryAfter(600_000)), result(B, http500)] }));
      expect(decision.state.urls[A]?.notBefore).toBe(T0 + 600_000);
      expect(decision.state.urls[B]?.notBefore).toBe(T0 + 500);
      expect(decision.at).toBe(T0 + 500);
    });

    it('that ends exactly at the window end is still honoured', () => {
      const now = T0 + HOUR;
      const decision = expectRetry(round({ results: [result(A, retryAfter(DEADLINE - now))], now, startedAt: T0 }));
      expect(decision.at).toBe(DEADLINE);
      expect(decision.state.urls[A]?.failed).toBeUndefined();
    });

    it('beyond the window is cut to the window end: one last attempt there, then dead', () => {
      const now = T0 + HOUR;
      const decision = expectRetry(round({ results: [result(A, retryAfter(DEADLINE - now + 1000))], now }));
      expect(decision.at).toBe(DEADLINE);
      expect(decision.state.urls[A]).toEqual({ lastError: 'HTTP 503', notBefore: DEADLINE });
      const dead = expectDead(
        round({ state: decision.state, results: [result(A, retryAfter(5 * HOUR))], startedAt: DEADLINE, now: DEADLINE }),
      );
      expect(dead.reason).toMatch(/^retry window of 4 h passed; last error: .*HTTP 503/);
    });

    it('beyond the window for one URL does not hold back another that can be retried sooner', () => {
      const decision = expectRetry(round({ urls: [A, B], results: [result(A, retryAfter(5 * HOUR)), result(B, http500)] }));
      expect(decision.state.urls[A]).toEqual({ lastError: 'HTTP 503', notBefore: DEADLINE });
      expect(decision.state.urls[B]).toEqual({ lastError: 'HTTP 500', notBefore: T0 + 500 });
      expect(decision.at).toBe(T0 + 500);
      expect(dueUrls([A, B], decision.state, decision.at)).toEqual([B]);
    });
  });

  describe('the retry window', () => {
    it('clamps the backoff to the window end, so a final attempt happens at the deadline', () => {
      const state: RetryState = { firstAttemptAt: T0, attempt: 20, urls: { [A]: { lastError: 'HTTP 500', notBefore: DEADLINE - 60_000 } } };
      // round 21 would wait 15 min (30 min ceiling × 0.5); only 1 min of the window is left
      const last = expectRetry(round({ state, results: [result(A, http500)], startedAt: DEADLINE - 60_000, now: DEADLINE - 60_000 }));
      expect(last.at).toBe(DEADLINE);
      expect(last.state.urls[A]?.notBefore).toBe(DEADLINE);
      expect(dueUrls([A], last.state, DEADLINE)).toEqual([A]);
      // the attempt at the deadline may still succeed …
      expect(round({ state: last.state, results: [result(A, ok)], startedAt: DEADLINE, now: DEADLINE + 30 })).toEqual({
        kind: 'delivered',
        url: A,
        attempt: 22,
      });
      // … and if it fails, the message is dead
      const dead = expectDead(round({ state: last.state, results: [result(A, http500)], startedAt: DEADLINE, now: DEADLINE }));
      expect(dead.reason).toMatch(/^retry window of 4 h passed; last error: /);
      expect(dead.reason).toContain(`${A}: HTTP 500`);
      expect(dead.state.attempt).toBe(22);
    });

    it('now ≥ deadline → dead with the reason naming the window', () => {
      const state: RetryState = { firstAttemptAt: T0, attempt: 3, urls: { [A]: { lastError: 'HTTP 502', notBefore: T0 } } };
      const dead = expectDead(
        round({
          state,
          results: [result(A, { kind: 'retryable', error: 'HTTP 502', status: 502 })],
          startedAt: DEADLINE + 5,
          now: DEADLINE + 10,
        }),
      );
      expect(dead.reason).toBe(`retry window of 4 h passed; last error: ${A}: HTTP 502`);
    });

    it.each([
      [90 * MIN, '90 min'],
      [2 * HOUR, '2 h'],
      [1500, '1.5 s'],
    ])('names a window of %i ms as %s', (windowMs, text) => {
      const dead = expectDead(round({ policy: { ...policy, windowMs }, results: [result(A, http500)], now: T0 + windowMs }));
      expect(dead.reason).toContain(`retry window of ${text} passed`);
    });

    it('counts from the FIRST attempt (state.firstAttemptAt), not from the latest', () => {
      // the latest round started a minute ago; the first one 4 h + 1 ms ago
      const state: RetryState = { firstAttemptAt: T0, attempt: 9, urls: { [A]: { lastError: 'HTTP 500', notBefore: DEADLINE - MIN } } };
      const dead = expectDead(round({ state, results: [result(A, http500)], startedAt: DEADLINE + 1, now: DEADLINE + 1 }));
      expect(dead.state.firstAttemptAt).toBe(T0);
      // one ms earlier the same round is still retried, clamped to the first attempt's deadline
      const retry = expectRetry(round({ state, results: [result(A, http500)], startedAt: DEADLINE - 1, now: DEADLINE - 1 }));
      expect(retry.at).toBe(DEADLINE);
      expect(retry.state.firstAttemptAt).toBe(T0);
    });

    it('starts at the first round start, not when the round ended', () => {
      const decision = expectRetry(round({ results: [result(A, http500)], startedAt: T0, now: T0 + 4999 }));
      expect(decision.state.firstAttemptAt).toBe(T0);
    });

    it('Retry-After is bounded by the window of the first attempt', () => {
      const state: RetryState = { firstAttemptAt: T0, attempt: 4, urls: { [A]: { lastError: 'HTTP 503', notBefore: T0 + 3 * HOUR } } };
      // 2 h is well inside a window counted from now, but ends after the first attempt's window
      const decision = expectRetry(
        round({ state, results: [result(A, retryAfter(2 * HOUR))], startedAt: T0 + 3 * HOUR, now: T0 + 3 * HOUR }),
      );
      expect(decision.at).toBe(DEADLINE);
    });
  });

  describe('bookkeeping', () => {
    it('increments the attempt counter once per round, however many URLs were tried', () => {
      const first = expectRetry(round({ urls: [A, B, C], results: [result(A, http500), result(B, http500), result(C, http500)] }));
      expect(first.state.attempt).toBe(1);
      const second = expectRetry(
        round({
          urls: [A, B, C],
          state: first.state,
          results: [result(A, http500), result(B, http500), result(C, http500)],
          startedAt: first.at,
          now: first.at,
        }),
      );
      expect(second.state.attempt).toBe(2);
      const third = expectRetry(
        round({ urls: [A, B, C], state: second.state, results: [result(B, http500)], startedAt: second.at, now: second.at }),
      );
      expect(third.state.attempt).toBe(3);
    });

    it('does not count a round in which nothing was due (the job ran early)', () => {
      const state: RetryState = { firstAttemptAt: T0, attempt: 4, urls: { [A]: { lastError: 'HTTP 500', notBefore: T0 + 60_000 } } };
      const decision = expectRetry(round({ state, results: [], startedAt: T0 + 1000, now: T0 + 1000 }));
      expect(decision.state.attempt).toBe(4);
      expect(decision.at).toBe(T0 + 60_000);
      expect(decision.state.urls[A]).toEqual(state.urls[A]);
    });

    it('drops a URL removed from the config from the state, and ignores its results', () => {
      const state: RetryState = {
        firstAttemptAt: T0,
        attempt: 2,
        urls: { [A]: { lastError: 'HTTP 500', notBefore: T0 + 1000 }, [B]: { lastError: 'HTTP 500', notBefore: T0 + 1000 } },
      };
      const decision = expectRetry(
        round({ urls: [A], state, results: [result(A, http500), result(B, http500)], startedAt: T0 + 1000, now: T0 + 1000 }),
      );
      expect(Object.keys(decision.state.urls)).toEqual([A]);
    });

    it('a removed URL that was the only one pending leaves nothing to retry', () => {
      const state: RetryState = {
        firstAttemptAt: T0,
        attempt: 2,
        urls: { [A]: { lastError: 'HTTP 404', failed: true }, [B]: { lastError: 'HTTP 500', notBefore: T0 + 1000 } },
      };
      const dead = expectDead(round({ urls: [A], state, results: [], startedAt: T0 + 1000, now: T0 + 1000 }));
      expect(Object.keys(dead.state.urls)).toEqual([A]);
      expect(dead.reason).toContain(`${A}: HTTP 404`);
    });

    it('a URL added to the config is retried at once', () => {
      const state: RetryState = { firstAttemptAt: T0, attempt: 2, urls: { [A]: { lastError: 'HTTP 404', failed: true } } };
      const decision = expectRetry(round({ urls: [A, B], state, results: [], startedAt: T0 + 1000, now: T0 + 1000 }));
      expect(decision.at).toBe(T0 + 1000);
      expect(dueUrls([A, B], decision.state, decision.at)).toEqual([B]);
    });

    it('does not modify the state it was given', () => {
      const state: RetryState = { firstAttemptAt: T0, attempt: 1, urls: { [A]: { lastError: 'HTTP 500', notBefore: T0 + 500 } } };
      const copy = structuredClone(state);
      round({ state, results: [result(A, http404)], startedAt: T0 + 500, now: T0 + 500 });
      expect(state).toEqual(copy);
    });
  });
});

describe('a whole schedule against a receiver that always answers 500', () => {
  interface Run {
    rounds: { startedAt: number; now: number; at?: number }[];
    end: Decision;
    endedAt: number;
  }

  /** Drives decideRound round after round as the worker would, with a fake clock. */
  function simulate(urls: readonly string[], random: () => number, attemptMs: number, p: RetryPolicy = DEFAULT_RETRY_POLICY): Run {
    let state: RetryState | undefined;
    let clock = T0;
    const rounds: Run['rounds'] = [];
    for (let i = 0; i < 100_000; i++) {
      const startedAt = clock;
      const due = dueUrls(urls, state, startedAt);
      const now = startedAt + attemptMs;
      const decision = decideRound({ urls, state, results: due.map((url) => result(url, http500)), startedAt, now, policy: p, random });
      if (decision.kind !== 'retry') {
        rounds.push({ startedAt, now });
        return { rounds, end: decision, endedAt: now };
      }
      rounds.push({ startedAt, now, at: decision.at });
      expect(decision.state.attempt).toBe(i + 1);
      expect(decision.state.firstAttemptAt).toBe(T0);
      state = decision.state;
      clock = decision.at;
    }
    throw new Error('the schedule never ended');
  }

  const TIMEOUT_MS = 5000;
  const deadline = T0 + DEFAULT_RETRY_POLICY.windowMs;

  it.each([
    ['instant answers, seed 1', 0, seededRandom(1)],
    ['instant answers, seed 2', 0, seededRandom(2)],
    ['200 ms answers, seed 3', 200, seededRandom(3)],
    ['timeouts (5 s), seed 4', TIMEOUT_MS, seededRandom(4)],
    ['timeouts (5 s), random always near 1', TIMEOUT_MS, fixed(almostOne)],
    ['instant answers, random always 0.5', 0, fixed(0.5)],
  ])('%s: every retry inside the window, gaps ≤ maxDelayMs, dead within the window', (_label, attemptMs, random) => {
    const run = simulate([A, B], random, attemptMs);
    const retries = run.rounds.filter((r) => r.at !== undefined);
    expect(retries.length).toBeGreaterThan(10);
    for (const r of retries) {
      const at = r.at as number;
      expect(at).toBeLessThanOrEqual(deadline);
      expect(at).toBeGreaterThanOrEqual(r.now);
      expect(at - r.now).toBeLessThanOrEqual(DEFAULT_RETRY_POLICY.maxDelayMs);
    }
    for (let i = 1; i < run.rounds.length; i++) {
      const gap = run.rounds[i]!.startedAt - run.rounds[i - 1]!.now;
      expect(gap).toBeLessThanOrEqual(DEFAULT_RETRY_POLICY.maxDelayMs);
    }
    const dead = expectDead(run.end);
    expect(dead.reason).toContain('retry window of 4 h passed');
    expect(dead.state.attempt).toBe(run.rounds.length);
    // the last round starts no later than the deadline and ends by one timeout after it
    expect(run.rounds[run.rounds.length - 1]!.startedAt).toBeLessThanOrEqual(deadline);
    expect(run.endedAt).toBeGreaterThanOrEqual(deadline);
    expect(run.endedAt).toBeLessThanOrEqual(deadline + TIMEOUT_MS);
  });

  it('with instant answers the final attempt is made exactly at the deadline', () => {
    const run = simulate([A], seededRandom(11), 0);
    expect(run.rounds[run.rounds.length - 1]!.startedAt).toBe(deadline);
    expect(run.endedAt).toBe(deadline);
  });

  it('the retries spread over the window rather than bunching at its start', () => {
    const run = simulate([A], fixed(0.5), 0);
    // 0.5 s, 1 s, 2 s … doubling to a 15 min gap: about 22 rounds over 4 h
    const gaps = run.rounds.slice(1).map((r, i) => r.startedAt - run.rounds[i]!.now);
    expect(gaps.slice(0, 5)).toEqual([500, 1000, 2000, 4000, 8000]);
    expect(Math.max(...gaps)).toBe(15 * MIN);
    expect(run.rounds.length).toBeGreaterThan(15);
    expect(run.rounds.length).toBeLessThan(40);
  });
});

describe('retryBy (a breaker probe that failed)', () => {
  it('brings every URL waiting past `at` forward to it; failed URLs and earlier waits stay', async () => {
    const { retryBy } = await import('./schedule.js');
    const decision = {
      kind: 'retry' as const,
      at: 5_000,
      state: {
        firstAttemptAt: 0,
        attempt: 4,
        urls: {
          a: { lastError: 'HTTP 503', notBefore: 9_000 },
          b: { lastError: 'HTTP 503', notBefore: 1_000 },
          c: { lastError: 'HTTP 404', failed: true },
        },
      },
    };
    expect(retryBy(decision, 2_000)).toEqual({
      kind: 'retry',
      at: 2_000,
      state: {
        firstAttemptAt: 0,
        attempt: 4,
        urls: {
          a: { lastError: 'HTTP 503', notBefore: 2_000 },
          b: { lastError: 'HTTP 503', notBefore: 1_000 },
          c: { lastError: 'HTTP 404', failed: true },
        },
      },
    });
  });
});
