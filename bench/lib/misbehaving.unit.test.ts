/** The misbehaving destination's figures: the 429 share after the grace, the time to recover per up phase, the flapping schedule. */
import { misbehavingFigures, recoveries, statusShare, THROTTLE_GRACE_S } from './misbehaving';
import { flapEvents, FLAP, SCENARIOS } from './scenarios';

describe('statusShare', () => {
  const attempts = [
    { arrivalMs: 1000, status: 429 },
    { arrivalMs: 2000, status: 200 },
    { arrivalMs: 3000, status: 429 },
    { arrivalMs: 4000, status: 200 },
  ];

  it('counts the attempts arriving at or after the moment given, and is null without any', () => {
    expect(statusShare(attempts, 429)).toBe(0.5);
    expect(statusShare(attempts, 429, 2000)).toBeCloseTo(1 / 3);
    expect(statusShare(attempts, 429, 3001)).toBe(0);
    expect(statusShare(attempts, 429, 5000)).toBeNull();
    expect(statusShare([], 503)).toBeNull();
  });
});

describe('recoveries', () => {
  it('takes as backlog the calls sent before the receiver came back and first delivered after, and times the last of them', () => {
    const firsts = [
      // Delivered before the receiver went away: not backlog.
      { sentAtMs: 0, arrivalMs: 50 },
      // Accepted while it was away, arriving 2 s and 7 s after it came back at 10,000.
      { sentAtMs: 6000, arrivalMs: 12_000 },
      { sentAtMs: 9000, arrivalMs: 17_000 },
      // Sent after it came back: not backlog, however late it arrives.
      { sentAtMs: 10_500, arrivalMs: 30_000 },
    ];
    expect(recoveries(firsts, [10_000])).toEqual([{ backlog: 2, recoveryMs: 7000 }]);
    // Nothing waiting: recovered at once.
    expect(recoveries(firsts, [5000])).toEqual([{ backlog: 0, recoveryMs: 0 }]);
  });

  it('counts a straggler in the phase it was sent before, with all its delay, and not in the next one', () => {
    // Back at 10 s and at 50 s: a call sent at 8 s arrives only at 52 s; one sent at 30 s (the up phase) fails at the
    // next 503 and arrives at 51 s.
    const firsts = [
      { sentAtMs: 8000, arrivalMs: 52_000 },
      { sentAtMs: 30_000, arrivalMs: 51_000 },
    ];
    expect(recoveries(firsts, [10_000, 50_000])).toEqual([
      { backlog: 1, recoveryMs: 42_000 },
      { backlog: 1, recoveryMs: 1000 },
    ]);
  });
});

describe('misbehavingFigures', () => {
  it('reports attempts per delivered call, the 429 shares, each up phase and the timelines', () => {
    const t0 = 100_000;
    const attempts = [
      { arrivalMs: t0 + 500, status: 429 },
      { arrivalMs: t0 + 600, status: 200 },
      { arrivalMs: t0 + THROTTLE_GRACE_S * 1000, status: 429 },
      { arrivalMs: t0 + THROTTLE_GRACE_S * 1000 + 1, status: 200 },
      { arrivalMs: t0 + 12_500, status: 200 },
    ];
    const firsts = [
      { sentAtMs: t0 + 100, arrivalMs: t0 + 600 },
      { sentAtMs: t0 + 9000, arrivalMs: t0 + 10_001 },
      { sentAtMs: t0 + 9500, arrivalMs: t0 + 12_500 },
    ];
    const m = misbehavingFigures({
      route: 'd0',
      attempts,
      firsts,
      loadStartMs: t0,
      windowStartMs: t0 + 5000,
      seconds: 13,
      switches: [
        { up: false, atMs: t0 + 8000 },
        { up: true, atMs: t0 + 10_000 },
      ],
      ratePerS: 200,
    });
    expect(m).toMatchObject({
      ...{ destination: 'd0', rate_limit_per_s: 200, attempts: 5, delivered_calls: 3, attempts_per_delivered_call: 1.667 },
      ...{ by_status: { '200': 3, '429': 2 }, status_429_share: 0.4, status_429_share_after_grace: 0.3333 },
      up_phases: [{ down_at_s: 3, up_at_s: 5, backlog_calls: 2, recovery_s: 2.5 }],
      ...{ recovery_max_s: 2.5, recovery_mean_s: 2.5 },
    });
    expect(m.attempts_per_s).toEqual([2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1]);
    expect(m.failed_per_s).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0]);
    expect(m.delivered_per_s).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1]);
  });

  it('has no recovery figures when the receiver never went away, and no ratio without a delivered call', () => {
    const m = misbehavingFigures({
      ...{ route: 'd0', attempts: [], firsts: [], loadStartMs: 0, windowStartMs: 0, seconds: 0, switches: [], ratePerS: undefined },
    });
    expect(m).toMatchObject({ rate_limit_per_s: null, attempts_per_delivered_call: null, status_429_share: null, up_phases: [] });
    expect([m.recovery_max_s, m.recovery_mean_s]).toEqual([null, null]);
  });
});

describe('the flapping schedule', () => {
  it('alternates 503 and back, and the window ends an up phase after the last return', () => {
    const events = flapEvents(0, { fromS: 5, downS: 20, upS: 20, cycles: 2 });
    expect(events.map((e) => [e.atS, e.kind])).toEqual([
      [5, 'receiver-unavailable'],
      [25, 'receiver-available'],
      [45, 'receiver-unavailable'],
      [65, 'receiver-available'],
    ]);
    const flapping = SCENARIOS.find((s) => s.name === 'flapping');
    const lastUp = Math.max(...(flapping?.events ?? []).map((e) => e.atS));
    expect(flapping?.measuredS).toBe(lastUp + FLAP.upS);
  });
});
