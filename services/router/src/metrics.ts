import { Counter, Histogram, LATENCY_BUCKETS, startAtZero, type Registry } from '@eventrelay/runtime';

export function createRouterMetrics(registry: Registry) {
  return {
    calls: startAtZero(
      new Counter({
        name: 'eventrelay_router_calls_total',
        help: 'Calls the router handled, by result: routed (to at least one destination), suppressed (a SUPPRESS regulation), unrouted (no destination takes it)',
        labelNames: ['result'] as const,
        registers: [registry],
      }),
      [{ result: 'routed' }, { result: 'suppressed' }, { result: 'unrouted' }],
    ),
    filtered: startAtZero(
      new Counter({
        name: 'eventrelay_router_filtered_total',
        help: "Deliveries not made, by reason: integrations (a call turned an enabled, connected destination off; one per call and destination), suppression (a call of a suppressed user), filter_drop and filter_only (a destination's drop rule held, or its only rule did not; one per call and destination)",
        labelNames: ['reason'] as const,
        registers: [registry],
      }),
      [{ reason: 'integrations' }, { reason: 'suppression' }, { reason: 'filter_drop' }, { reason: 'filter_only' }],
    ),
    wholeCallReads: new Counter({
      name: 'eventrelay_router_whole_call_reads_total',
      help: "Route jobs for which the router read the calls themselves: a destination's drop or only rule tests a field beyond type, event, userId, messageId, timestamp and integrations",
      registers: [registry],
    }),
    fanout: new Histogram({
      name: 'eventrelay_router_fanout',
      help: 'Destinations one call is routed to',
      buckets: [0, 1, 2, 3, 5, 10, 20, 50],
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'eventrelay_router_deliveries_total',
      help: "Deliveries handed to webhook-delivery: one per call and destination (a destination's calls of one route job travel in one delivery job)",
      registers: [registry],
    }),
    batchCalls: new Histogram({
      name: 'eventrelay_router_batch_calls',
      help: 'Calls in one route job (one ingest flush, all sources)',
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
      registers: [registry],
    }),
    routeSeconds: new Histogram({
      name: 'eventrelay_router_route_seconds',
      help: 'Time to route one route job (one ingest flush)',
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
  };
}

export type RouterMetrics = ReturnType<typeof createRouterMetrics>;
