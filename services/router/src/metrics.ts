import { Counter, Histogram, LATENCY_BUCKETS, startAtZero, type Registry } from '@eventrelay/runtime';

export function createRouterMetrics(registry: Registry) {
  return {
    calls: startAtZero(new Counter({
      name: 'eventrelay_router_calls_total',
      help: 'Calls the router handled, by result: routed (at least one delivery job), suppressed (a SUPPRESS regulation), unrouted (no destination takes it)',
      labelNames: ['result'] as const,
      registers: [registry],
    }), [{ result: 'routed' }, { result: 'suppressed' }, { result: 'unrouted' }]),
    filtered: startAtZero(new Counter({
      name: 'eventrelay_router_filtered_total',
      help: 'Deliveries not made, by reason: integrations (a call turned an enabled, connected destination off; one per call and destination), suppression (a call of a suppressed user)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }), [{ reason: 'integrations' }, { reason: 'suppression' }]),
    fanout: new Histogram({ name: 'eventrelay_router_fanout', help: 'Delivery jobs made from one call', buckets: [0, 1, 2, 3, 5, 10, 20, 50], registers: [registry] }),
    deliveries: new Counter({ name: 'eventrelay_router_deliveries_total', help: 'Delivery jobs handed to webhook-delivery (a repeat of a job id is counted but not delivered twice)', registers: [registry] }),
    routeSeconds: new Histogram({ name: 'eventrelay_router_route_seconds', help: 'Time to expand one route job (one intake request)', buckets: LATENCY_BUCKETS, registers: [registry] }),
  };
}

export type RouterMetrics = ReturnType<typeof createRouterMetrics>;
