/**
 * The figures of the one misbehaving destination of the throttling and flapping scenarios (issue 21),
 * from its every attempt and first deliveries: attempts per delivered call, the share answered 429
 * (after the sender's first 10 s, its time to learn the limit), and for each time the receiver came
 * back, how long its backlog took to arrive. Pure: the run gathers the records, this counts.
 */
import { round } from './report.js';
import { perSecond } from './series.js';

/** One request to the destination: when its body arrived (epoch ms) and the status answered (0: none). */
export interface Attempt {
  readonly arrivalMs: number;
  readonly status: number;
}

/** A call's first 2xx at the receiver, and when the load generator sent it (epoch ms). */
export interface FirstArrival {
  readonly sentAtMs: number;
  readonly arrivalMs: number;
}

/** The receiver going away (503 or refused) and coming back, epoch ms. */
export interface Switch {
  readonly up: boolean;
  readonly atMs: number;
}

/** How long the sender is given to find a rate limit before its 429s count against the target. */
export const THROTTLE_GRACE_S = 10;

/** The share of `attempts` arriving at or after `fromMs` that were answered `status`; null when none arrived then. */
export function statusShare(attempts: readonly Attempt[], status: number, fromMs = -Infinity): number | null {
  let n = 0;
  let hits = 0;
  for (const a of attempts)
    if (a.arrivalMs >= fromMs) {
      n++;
      if (a.status === status) hits++;
    }
  return n === 0 ? null : hits / n;
}

/**
 * For each time the receiver came back (`upAtMs`, in order): its backlog, the calls sent since it
 * last came back (since the start, the first time) and first delivered at or after this moment
 * (those accepted while it was away, and those just before that it failed), and how long after the
 * moment the last of them arrived (0 without a backlog). Each call belongs to the first return after
 * it was sent, so a straggler counts in its own phase, with all of its delay, and in no later one.
 */
export function recoveries(firsts: readonly FirstArrival[], upAtMs: readonly number[]): { backlog: number; recoveryMs: number }[] {
  return upAtMs.map((up, k) => {
    const since = upAtMs[k - 1] ?? -Infinity;
    let backlog = 0;
    let last = up;
    for (const f of firsts)
      if (f.sentAtMs >= since && f.sentAtMs < up && f.arrivalMs >= up) {
        backlog++;
        last = Math.max(last, f.arrivalMs);
      }
    return { backlog, recoveryMs: last - up };
  });
}

/** The misbehaving destination's figures for the run's JSON; times in seconds from the measured window's start. */
export function misbehavingFigures(o: {
  readonly route: string;
  readonly attempts: readonly Attempt[];
  readonly firsts: readonly FirstArrival[];
  /** When the load started (warm-up included) and when the measured window started, epoch ms. */
  readonly loadStartMs: number;
  readonly windowStartMs: number;
  /** Seconds from loadStartMs the timelines cover. */
  readonly seconds: number;
  readonly switches: readonly Switch[];
  readonly ratePerS: number | undefined;
}) {
  const byStatus: Record<string, number> = {};
  for (const a of o.attempts) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
  const s = (ms: number) => round((ms - o.windowStartMs) / 1000, 1);
  const ups = o.switches.filter((w) => w.up);
  const phases = recoveries(
    o.firsts,
    ups.map((w) => w.atMs),
  ).map((r, k) => {
    const up = (ups[k] as Switch).atMs;
    const down = o.switches.filter((w) => !w.up && w.atMs <= up).reduce((a, w) => Math.max(a, w.atMs), -Infinity);
    return {
      down_at_s: Number.isFinite(down) ? s(down) : null,
      up_at_s: s(up),
      backlog_calls: r.backlog,
      recovery_s: round(r.recoveryMs / 1000, 1),
    };
  });
  const recoveryS = phases.map((p) => p.recovery_s);
  const failed = o.attempts.filter((a) => a.status < 200 || a.status >= 300);
  return {
    destination: o.route,
    rate_limit_per_s: o.ratePerS ?? null,
    attempts: o.attempts.length,
    delivered_calls: o.firsts.length,
    /** Every request the receiver recorded for the destination over the run (settle included), per call it answered 2xx. */
    attempts_per_delivered_call: o.firsts.length === 0 ? null : round(o.attempts.length / o.firsts.length, 3),
    by_status: byStatus,
    status_429_share: roundShare(statusShare(o.attempts, 429)),
    /** Over the attempts arriving THROTTLE_GRACE_S or more after the load started (warm-up included). */
    status_429_share_after_grace: roundShare(statusShare(o.attempts, 429, o.loadStartMs + THROTTLE_GRACE_S * 1000)),
    /** Each time the receiver came back: when (s into the window), its backlog, and the time until the last of it arrived. */
    up_phases: phases,
    recovery_max_s: recoveryS.length ? Math.max(...recoveryS) : null,
    recovery_mean_s: recoveryS.length ? round(recoveryS.reduce((a, b) => a + b, 0) / recoveryS.length, 1) : null,
    /** Per second from the start of the load: requests to the destination, those not answered 2xx, and calls first delivered. */
    attempts_per_s: perSecond(
      o.attempts.map((a) => a.arrivalMs),
      o.loadStartMs,
      o.seconds,
    ),
    failed_per_s: perSecond(
      failed.map((a) => a.arrivalMs),
      o.loadStartMs,
      o.seconds,
    ),
    delivered_per_s: perSecond(
      o.firsts.map((f) => f.arrivalMs),
      o.loadStartMs,
      o.seconds,
    ),
  };
}

const roundShare = (share: number | null) => (share === null ? null : round(share, 4));
