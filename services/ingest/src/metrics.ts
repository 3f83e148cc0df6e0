import { Counter, Gauge, Histogram, LATENCY_BUCKETS, type Registry } from '@eventrelay/runtime';

export type IngestMetrics = ReturnType<typeof createIngestMetrics>;

/** Labels come from bounded sets only: route, status class, error code, call type, outcome, configured source (docs/metrics.md). */
export function createIngestMetrics(
  registry: Registry,
  queueDepth: () => number,
  redisMemoryRatio: () => number | undefined = () => undefined,
  replicasOnline: () => number | undefined = () => undefined,
  sourceIds: () => Iterable<string> = () => [],
) {
  return {
    requests: new Counter({
      name: 'eventrelay_ingest_requests_total',
      help: 'Intake requests by route (call type, or batch), status class (2xx, 4xx, 5xx) and code (the error code answered, or ok)',
      labelNames: ['route', 'status_class', 'code'] as const,
      registers: [registry],
    }),
    calls: new Counter({
      name: 'eventrelay_ingest_calls_total',
      help: 'Calls by type and outcome: accepted (enqueued), duplicate (acknowledged, not routed again), rejected (with reason: a batch item refused, or a valid call refused with its request: its error code, e.g. overloaded, rate_limited)',
      labelNames: ['type', 'outcome', 'reason'] as const,
      registers: [registry],
    }),
    overBudget: new Counter({
      name: 'eventrelay_ingest_source_over_budget_total',
      help: "Requests refused with 429 source_over_budget by source: its dedupe claims hold its whole share of Redis's maxmemory (docs/intake.md, Budgets); the other sources are unaffected",
      labelNames: ['source'] as const,
      registers: [registry],
      // Every configured source has its series from the start: increase() over a series that
      // appears at its first refusal would miss that refusal.
      collect() {
        for (const source of sourceIds()) this.inc({ source }, 0);
      },
    }),
    duration: new Histogram({
      name: 'eventrelay_ingest_request_duration_seconds',
      help: 'Time from request start to answer',
      labelNames: ['route'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'eventrelay_ingest_route_queue_waiting',
      help: 'Waiting jobs on the route queue, as last polled',
      registers: [registry],
      collect() {
        this.set(queueDepth());
      },
    }),
    replicaWait: new Histogram({
      name: 'eventrelay_ingest_replica_wait_seconds',
      help: 'Durable mode (INGEST_DURABLE_REPLICAS): how long each flush waited for the replicas to confirm its calls, by result (confirmed, or not_replicated when fewer did in time)',
      labelNames: ['result'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    replicasOnline: new Gauge({
      name: 'eventrelay_ingest_redis_replicas_online',
      help: "Durable mode: the Redis primary's replicas in state online as ingest last sampled them (every 500 ms); below INGEST_DURABLE_REPLICAS the intake answers 503 not_replicated. No series without durable mode",
      registers: [registry],
      collect() {
        const n = replicasOnline();
        if (n !== undefined) this.set(n);
      },
    }),
    redisMemoryRatio: new Gauge({
      name: 'eventrelay_ingest_redis_memory_ratio',
      help: "Redis used_memory / maxmemory as ingest's memory guard last sampled it (0 when Redis has no maxmemory or the guard is off); at INGEST_REDIS_MEMORY_LIMIT_RATIO the intake answers 503 overloaded",
      registers: [registry],
      collect() {
        this.set(redisMemoryRatio() ?? 0);
      },
    }),
  };
}
