import { Counter, Histogram, LATENCY_BUCKETS, type Registry } from '@eventrelay/runtime';

export function createRouterMetrics(registry: Registry) {
  return {
    calls: new Counter({
      name: 'eventrelay_router_calls_total',
      help: 'Calls the router handled, by result: routed (at least one delivery job), suppressed (a SUPPRESS regulation), unrouted (no destination takes it)',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    deliveries: new Counter({ name: 'eventrelay_router_deliveries_total', help: 'Delivery jobs handed to webhook-delivery (a repeat of a job id is counted but not delivered twice)', registers: [registry] }),
    routeSeconds: new Histogram({ name: 'eventrelay_router_route_seconds', help: 'Time to expand one route job (one intake request)', buckets: LATENCY_BUCKETS, registers: [registry] }),
  };
}

export type RouterMetrics = ReturnType<typeof createRouterMetrics>;
