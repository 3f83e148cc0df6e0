/**
 * The adaptive limit and the breaker together, against simulated receivers, on an injected clock
 * (issue 31): a receiver with a few random failures is served at the offered rate, one that
 * throttles is found, one that is down trips the breaker. The sender is a millisecond-step model
 * of the gate: a request starts when the breaker admits it, fewer than the concurrency are open,
 * and the rate's next turn has come.
 */
import { AdaptiveLimit } from './adaptive-limit.js';
import { answerSignal, type AnswerSignal } from './answer-signal.js';
import { Breaker } from './breaker.js';
import { classifyStatus } from './outcome.js';
import { seededRandom } from '../../../../test/support/seeded-random';

const T0 = Date.parse('2026-11-28T10:00:00.000Z');
const TIMEOUT_MS = 5000;

/** What a simulated receiver answers a request started at `at` (ms since the start): a status, or `timeout`. */
type Receiver = (at: number) => number | 'timeout';

interface Simulation {
  /** Requests started, per whole second. */
  readonly sentPerS: number[];
  /** Of those, answered 429. */
  readonly throttledPerS: number[];
  readonly sent: number;
  readonly offered: number;
  /** Lowest concurrency and rate seen, and when the breaker first opened (ms since the start). */
  readonly minConcurrency: number;
  readonly minRate: number;
  readonly openedAt: number | undefined;
}

/**
 * `offeredPerS` new requests a second, evenly spread, for `seconds`; each waits in a queue until
 * it may start (no retries: the offered load is what the destination is asked to carry).
 */
function simulate(receiver: Receiver, offeredPerS: number, seconds: number, latencyMs = 20, maxConcurrency = 64): Simulation {
  const limit = new AdaptiveLimit({ maxConcurrency, maxRate: Number.POSITIVE_INFINITY });
  const breaker = new Breaker();
  const answers: { at: number; signal: AnswerSignal }[] = [];
  const sentPerS = new Array<number>(seconds).fill(0);
  const throttledPerS = new Array<number>(seconds).fill(0);
  let queued = 0;
  let offered = 0;
  let open = 0;
  let nextTurn = 0;
  let minConcurrency = limit.concurrency;
  let minRate = limit.rate;
  let openedAt: number | undefined;
  for (let ms = 0; ms < seconds * 1000; ms++) {
    const now = T0 + ms;
    const due = Math.floor(((ms + 1) * offeredPerS) / 1000) - Math.floor((ms * offeredPerS) / 1000);
    queued += due;
    offered += due;
    for (let i = answers.length - 1; i >= 0; i--) {
      const a = answers[i]!;
      if (a.at > now) continue;
      answers.splice(i, 1);
      open--;
      limit.observe(a.signal, now);
      if (breaker.observe(a.signal, now) === 'opened') openedAt ??= ms;
    }
    while (queued > 0 && open < limit.concurrency && nextTurn <= now) {
      const admission = breaker.admit(now);
      if (admission.kind === 'wait') break;
      const answer = receiver(ms);
      const outcome =
        answer === 'timeout'
          ? { kind: 'retryable' as const, error: `timeout: no complete response within ${TIMEOUT_MS} ms` }
          : classifyStatus(answer, answer === 429 ? '1' : undefined, now);
      answers.push({ at: now + (answer === 'timeout' ? TIMEOUT_MS : latencyMs), signal: answerSignal(outcome) });
      open++;
      queued--;
      sentPerS[Math.floor(ms / 1000)]!++;
      if (answer === 429) throttledPerS[Math.floor(ms / 1000)]!++;
      if (Number.isFinite(limit.rate)) nextTurn = Math.max(nextTurn, now) + 1000 / limit.rate;
      if (admission.kind === 'probe') break;
    }
    minConcurrency = Math.min(minConcurrency, limit.concurrency);
    minRate = Math.min(minRate, limit.rate);
  }
  return { sentPerS, throttledPerS, sent: sentPerS.reduce((a, b) => a + b, 0), offered, minConcurrency, minRate, openedAt };
}

/** Answers `share`s of the requests with the statuses given, at random, and 200 otherwise. */
function randomly(shares: readonly [number | 'timeout', number][], seed: number): Receiver {
  const random = seededRandom(seed);
  return () => {
    let r = random();
    for (const [answer, share] of shares) {
      if (r < share) return answer;
      r -= share;
    }
    return 200;
  };
}

/** Admits `perS` requests a second (a window per second, as many rate limiters keep), 429 above. */
function rateLimited(perS: number): Receiver {
  const seen = new Map<number, number>();
  return (at) => {
    const second = Math.floor(at / 1000);
    const n = (seen.get(second) ?? 0) + 1;
    seen.set(second, n);
    return n <= perS ? 200 : 429;
  };
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('the receiver-friendly controllers against simulated receivers', () => {
  it('2% random 429s at 100 requests/s keep at least 95% of the requests going out, with no rate in force for long', () => {
    const sim = simulate(randomly([[429, 0.02]], 1), 100, 120);
    expect(sim.sent / sim.offered).toBeGreaterThanOrEqual(0.95);
    expect(mean(sim.sentPerS.slice(10))).toBeGreaterThanOrEqual(95);
  });

  it('10% random 500s neither open the breaker nor lower the concurrency below what the offered rate needs', () => {
    const latencyMs = 50;
    const sim = simulate(randomly([[500, 0.1]], 2), 100, 120, latencyMs);
    expect(sim.openedAt).toBeUndefined();
    // Little's law: 100 requests/s of 50 ms each keep 5 open on average.
    expect(sim.minConcurrency).toBeGreaterThanOrEqual(Math.ceil((100 * latencyMs) / 1000));
    expect(sim.minConcurrency).toBe(64);
    expect(sim.sent / sim.offered).toBeGreaterThanOrEqual(0.99);
  });

  it('5% 503s, 2% 429s and 3% timeouts at random keep at least 95% going, the breaker closed', () => {
    const sim = simulate(
      randomly(
        [
          [503, 0.05],
          [429, 0.02],
          ['timeout', 0.03],
        ],
        3,
      ),
      100,
      120,
    );
    expect(sim.openedAt).toBeUndefined();
    expect(sim.sent / sim.offered).toBeGreaterThanOrEqual(0.95);
    // 3 timeouts a second hold a request each for 5 s: 15 open besides the quick ones.
    expect(sim.minConcurrency).toBeGreaterThanOrEqual(16);
  });

  it('a receiver that answers 429 above 100 requests/s is sent within 10% of 100/s once found, with under 5% of 429s', () => {
    const sim = simulate(rateLimited(100), 300, 90);
    const settled = mean(sim.sentPerS.slice(30));
    expect(settled).toBeGreaterThanOrEqual(90);
    expect(settled).toBeLessThanOrEqual(110);
    // Found within the first seconds: no second after the tenth is far above the limit.
    expect(Math.max(...sim.sentPerS.slice(10))).toBeLessThan(130);
    const after10 = (xs: number[]) => xs.slice(10).reduce((a, b) => a + b, 0);
    expect(after10(sim.throttledPerS) / after10(sim.sentPerS)).toBeLessThan(0.05);
  });

  it('a receiver that throttled for a while, then answers 2% 429s at random, gets its whole rate back', () => {
    const limited = rateLimited(50);
    const noisy = randomly([[429, 0.02]], 4);
    const sim = simulate((at) => (at < 10_000 ? limited(at) : noisy(at)), 100, 120);
    expect(sim.minRate).toBeLessThan(60);
    // Within a minute and a half of the throttling's end, the offered 100/s go out again in full.
    expect(mean(sim.sentPerS.slice(100))).toBeGreaterThanOrEqual(99);
  });

  it('a receiver that answers 503 to everything opens the breaker within its window, and sets no rate', () => {
    const sim = simulate(() => 503, 100, 15);
    expect(sim.openedAt).toBeDefined();
    expect(sim.openedAt).toBeLessThanOrEqual(10_000);
    expect(sim.minRate).toBe(Number.POSITIVE_INFINITY);
    // Then probes only: one request at a time, at least a second apart.
    expect(Math.max(...sim.sentPerS.slice(2))).toBeLessThanOrEqual(1);
  });
});
