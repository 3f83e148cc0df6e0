/** The targets of the performance issue, checked against run results, and the Markdown table. */
import { evaluateTargets, markdownTable, tableRows } from './chaos-report';
import type { RunResult } from './run';
import { compactJson } from './report';
import { verify } from './verify';

const latency = (p99: number) => ({ p50: p99 / 4, p90: p99 / 2, p99, p999: p99 * 2, max: p99 * 3 });
const perDestination = (each: number) =>
  Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`d${i}`, { delivered_calls_per_s: each, p99_ms: 10 }]));

function run(over: Partial<RunResult> & Pick<RunResult, 'scenario' | 'mode'>): RunResult {
  const verification = verify({
    acknowledged: new Map([['d0', ['a']]]),
    delivered: new Map([['d0', new Map([['a', 1]])]]),
    deadLettered: new Map(),
  });
  return {
    offered_calls_per_s: over.mode === 'saturation' ? null : 1000,
    measured_s: 20,
    accepted_calls_per_s: 1000,
    delivered_calls_per_s: 1000,
    healthy_delivered_calls_per_s: 1000,
    latency_ms: latency(20),
    healthy_latency_ms: latency(20),
    per_destination: perDestination(100),
    verification,
    expectation_failures: [],
    passed: true,
    duplicate_examples: [],
    refused_batches: 0,
    transport_errors: 0,
    intake_status_codes: {},
    receiver: {
      requests: 1,
      by_status: {},
      attempts_to_deliver: {},
      bad_signatures: 0,
      unsigned: 0,
      tls_requests: 0,
      tls_client_errors: 0,
    },
    cpu_pct: {},
    cpu_usec_per_delivered_call: { sum: 400 },
    peak_rss_mb: { ingest: 100 },
    redis_used_memory_mb: { start: 1, end: 2, peak: 3 },
    settle_s: 1,
    queued_at_end: 0,
    last_delivery_after_load_s: 0.1,
    events: [],
    timeline: { delivered_per_s: [], accepted_per_s: [], warmup_s: 5 },
    ...over,
  };
}

const verdictOf = (targets: ReturnType<typeof evaluateTargets>, start: string) => targets.find((t) => t.name.startsWith(start))?.met;

describe('evaluateTargets', () => {
  it('meets the healthy targets at 3,000 delivered/s and p99 under 250 ms, and misses them below', () => {
    const good = evaluateTargets([
      run({ scenario: 'healthy', mode: 'saturation', delivered_calls_per_s: 3000 }),
      run({ scenario: 'healthy', mode: 'fixed', latency_ms: latency(249) }),
    ]);
    expect(verdictOf(good, 'healthy: delivered')).toBe(true);
    expect(verdictOf(good, 'healthy: end-to-end p99')).toBe(true);
    const bad = evaluateTargets([
      run({ scenario: 'healthy', mode: 'saturation', delivered_calls_per_s: 2999 }),
      run({ scenario: 'healthy', mode: 'fixed', latency_ms: latency(250) }),
    ]);
    expect(verdictOf(bad, 'healthy: delivered')).toBe(false);
    expect(verdictOf(bad, 'healthy: end-to-end p99')).toBe(false);
  });

  it('says "not measured" (undefined) for what did not run', () => {
    const targets = evaluateTargets([]);
    expect(verdictOf(targets, 'healthy: delivered')).toBeUndefined();
    expect(verdictOf(targets, 'dead 1 of 10: the 9')).toBeUndefined();
  });

  it('compares the 9 healthy destinations of the dead scenario with the same 9 in the healthy one', () => {
    const healthy = run({ scenario: 'healthy', mode: 'saturation', per_destination: perDestination(500) });
    const kept = evaluateTargets([
      healthy,
      run({
        scenario: 'dead-1-of-10',
        mode: 'saturation',
        per_destination: { ...perDestination(400), d9: { delivered_calls_per_s: 0, p99_ms: null } },
      }),
    ]);
    expect(verdictOf(kept, 'dead 1 of 10: the 9')).toBe(true);
    const starved = evaluateTargets([healthy, run({ scenario: 'dead-1-of-10', mode: 'saturation', per_destination: perDestination(399) })]);
    expect(verdictOf(starved, 'dead 1 of 10: the 9')).toBe(false);
  });

  it('explains a flaky slowdown by the CPU the retries cost, and no more', () => {
    const healthy = run({
      scenario: 'healthy',
      mode: 'saturation',
      delivered_calls_per_s: 5000,
      cpu_usec_per_delivered_call: { sum: 400 },
    });
    // 25% more CPU per call: 4,000/s expected; 90% of it is 3,600.
    expect(
      verdictOf(
        evaluateTargets([
          healthy,
          run({ scenario: 'flaky', mode: 'saturation', delivered_calls_per_s: 3600, cpu_usec_per_delivered_call: { sum: 500 } }),
        ]),
        'flaky: saturation',
      ),
    ).toBe(true);
    expect(
      verdictOf(
        evaluateTargets([
          healthy,
          run({ scenario: 'flaky', mode: 'saturation', delivered_calls_per_s: 3500, cpu_usec_per_delivered_call: { sum: 500 } }),
        ]),
        'flaky: saturation',
      ),
    ).toBe(false);
  });

  it('fails "nothing lost" when any run lost a call', () => {
    const lost = run({
      scenario: 'delivery-killed',
      mode: 'fixed',
      passed: false,
      verification: verify({ acknowledged: new Map([['d0', ['x']]]), delivered: new Map(), deadLettered: new Map() }),
    });
    const targets = evaluateTargets([run({ scenario: 'healthy', mode: 'fixed' }), lost]);
    expect(verdictOf(targets, 'crash and restart')).toBe(false);
    expect(verdictOf(targets, 'every scenario')).toBe(false);
  });

  it('finds RSS flat and Redis bounded in a soak that levels off, and growth in one that does not', () => {
    const flat = Array.from({ length: 60 }, (_, i) => [i * 10, 150 + (i % 3)] as [number, number]);
    const growing = Array.from({ length: 60 }, (_, i) => [i * 10, 100 + i * 2] as [number, number]);
    const level = (fn: (i: number) => number) => Array.from({ length: 60 }, (_, i) => [i * 10, fn(i)] as [number, number]);
    const ok = evaluateTargets([
      run({
        scenario: 'healthy',
        mode: 'soak',
        memory_timeline: { ingest: flat, 'redis used_memory': level((i) => Math.min(i, 30) + 50) },
      }),
    ]);
    expect(verdictOf(ok, 'soak: RSS')).toBe(true);
    expect(verdictOf(ok, 'soak: Redis')).toBe(true);
    const leak = evaluateTargets([
      run({ scenario: 'healthy', mode: 'soak', memory_timeline: { ingest: growing, 'redis used_memory': level((i) => 50 + i * 3) } }),
    ]);
    expect(verdictOf(leak, 'soak: RSS')).toBe(false);
    expect(verdictOf(leak, 'soak: Redis')).toBe(false);
  });
});

describe('markdownTable', () => {
  it('right-aligns the figures and escapes pipes', () => {
    const { header, rows } = tableRows([run({ scenario: 'healthy', mode: 'fixed' })]);
    const md = markdownTable(header, rows);
    expect(md.split('\n')[1]).toMatch(/^\| --- \| --- \| ---: \|/);
    expect(md).toContain('| healthy | fixed | 1,000 |');
    expect(markdownTable(['a|b'], [['c']])).toContain('a\\|b');
  });
});

describe('compactJson', () => {
  it('puts arrays of numbers on one line and stays valid JSON that reads back the same', () => {
    const value = {
      timeline: [1, 2, 3.5],
      points: [
        [0, 1],
        [2, -3e-5],
      ],
      names: ['a', 'b'],
      empty: [],
    };
    const text = compactJson(value);
    expect(text).toContain('"timeline": [1, 2, 3.5]');
    expect(text).toContain('[2, -0.00003]');
    expect(text).toContain('"names": [\n');
    expect(JSON.parse(text)).toEqual(value);
  });
});
