import { Counter, Histogram, LATENCY_BUCKETS, type Registry } from '@eventrelay/runtime';

export function createAdminMetrics(registry: Registry) {
  return {
    requests: new Counter({
      name: 'eventrelay_admin_requests_total',
      help: 'Admin API requests by operation and HTTP status',
      labelNames: ['operation', 'status'] as const,
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'eventrelay_admin_request_duration_seconds',
      help: 'Admin API request duration by operation',
      labelNames: ['operation'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
  };
}

export type AdminMetrics = ReturnType<typeof createAdminMetrics>;
