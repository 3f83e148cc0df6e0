/** The filter cost report: per-call CPU from the window's CPU %, the difference, and the per call × destination verdict. */
import type { MicroResult } from './filters';
import { filtersReport, phaseFigures, type FilterPhase } from './filters-report';

const phase = (routerPct: number, deliveryPct: number, routed = 3000): FilterPhase => ({
  measured_s: 20,
  offered_calls_per_s: 150,
  accepted_calls_per_s: 150,
  delivered_calls_per_s: 1500,
  latency_ms: { p99: 12.5 },
  cpu_pct: { router: routerPct, 'webhook-delivery': deliveryPct, ingest: 5 },
  verification: { acknowledged: 3500, delivered: 3500, lost: 0, duplicates: 0 },
  detail: {
    redis: { cpu_usec_per_call: 10, by_command: [{ command: 'hmget', calls: 150 }] },
    service_counters: { router_routed_calls: routed },
  },
});

const variant = (usec: number) => ({ usec_per_call: usec, min_usec_per_call: usec, rounds: [usec] });
const micro: MicroResult = {
  calls_per_batch: 500,
  destinations: 10,
  rules_per_destination: 10,
  rounds: 1,
  iterations_per_round: 10,
  no_filters: variant(0.5),
  filters: variant(4.5),
  filters_with_parse: variant(7.5),
};

describe('phaseFigures', () => {
  it('divides the router CPU by the calls it routed and webhook-delivery by the deliveries', () => {
    // 3% of a core for 20 s = 600,000 µs; over 3,000 calls 200 µs; 15% over 30,000 deliveries 100 µs.
    const f = phaseFigures(phase(3, 15));
    expect(f.router_usec_per_call).toBe(200);
    expect(f.delivery_usec_per_delivered_call).toBe(100);
    expect(f.deliveries_per_routed_call).toBe(10);
    // Redis: 10 µs per delivery x 30,000 deliveries over 3,000 calls.
    expect(f.redis_usec_per_call).toBe(100);
    expect(f.hmget_per_call).toBe(0.05);
  });

  it('falls back on the calls accepted without the router counter', () => {
    const p = phase(3, 15);
    expect(phaseFigures({ ...p, detail: { ...p.detail!, service_counters: null } }).router_usec_per_call).toBe(200);
  });
});

describe('filtersReport', () => {
  it('reports the difference per call and per call × destination against the target', () => {
    const { json, met, text } = filtersReport(
      { fanout: phase(3, 15), filters: phase(3.6, 15.3), micro },
      { destinations: 10, rules: 10, rate: 150 },
    );
    // (3.6 - 3) % of 20 s = 120,000 µs over 3,000 calls = 40 µs per call, 4 per call × destination.
    expect(json['pipeline']).toMatchObject({
      router_added_usec_per_call: 40,
      router_added_usec_per_call_x_destination: 4,
      delivery_added_usec_per_delivered_call: 2,
    });
    expect(json['micro']).toMatchObject({ added_usec_per_call_x_destination: 0.4, with_parse_added_usec_per_call_x_destination: 0.7 });
    expect(met).toEqual({
      filters_pipeline_router_added_usec_per_call_x_destination: true,
      filters_micro_added_usec_per_call_x_destination: true,
    });
    expect(text).toContain('4.000 µs per call × destination (target < 10): met');
  });

  it('misses the target at 10 µs or more per call × destination, and leaves what did not run unmeasured', () => {
    const { met } = filtersReport({ fanout: phase(3, 15), filters: phase(18, 15) }, { destinations: 10, rules: 10, rate: 150 });
    expect(met).toEqual({
      filters_pipeline_router_added_usec_per_call_x_destination: false,
      filters_micro_added_usec_per_call_x_destination: undefined,
    });
  });
});
