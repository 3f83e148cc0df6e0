import { Counter, Gauge, Histogram, LATENCY_BUCKETS, type Registry } from '@eventrelay/runtime';
import type { DestinationGate } from './destination-gate.js';

/**
 * `gate`: the requests open now, the adaptive limits and the breakers, by destination (read at
 * each scrape, so sending costs nothing extra). `retryHeld`: the calls held for a retry, by destination, read from Redis at each
 * scrape (one HGETALL; every replica reports the same figure).
 */
export function createDeliveryMetrics(
  registry: Registry,
  gate: Pick<DestinationGate, 'openRequests' | 'limits'>,
  retryHeld: () => Promise<ReadonlyMap<string, number>>,
) {
  // Destinations this process has reported held calls for: shown at 0 once they hold none (the
  // hash has no field at 0), so a drained backlog reads 0 rather than a series that stops.
  const heldSeen = new Set<string>();
  return {
    attempts: new Counter({
      name: 'eventrelay_delivery_attempts_total',
      help: 'Attempts at one URL, by destination, outcome (success, retryable, permanent) and status class (2xx..5xx, or why no response came: timeout, connection_refused, ...)',
      labelNames: ['destination', 'outcome', 'status_class'] as const,
      registers: [registry],
    }),
    attemptSeconds: new Histogram({
      name: 'eventrelay_delivery_attempt_seconds',
      help: 'Duration of one attempt at one URL, by outcome',
      labelNames: ['outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    messages: new Counter({
      name: 'eventrelay_delivery_messages_total',
      help: 'Calls a delivery job finished or kept for a retry, by destination and result: delivered, retry_scheduled, dead_lettered, dropped (destination deleted, or a call missing from its batch)',
      labelNames: ['destination', 'result'] as const,
      registers: [registry],
    }),
    erased: new Counter({
      name: 'eventrelay_delivery_erased_total',
      help: 'Calls dropped unsent because a deletion regulation erased their user after they were received, by destination',
      labelNames: ['destination'] as const,
      registers: [registry],
    }),
    endToEndSeconds: new Histogram({
      name: 'eventrelay_delivery_end_to_end_seconds',
      help: 'From intake (receivedAt) to the first 2xx from a receiver',
      buckets: [...LATENCY_BUCKETS, 10, 30, 60, 300, 1800, 3600, 14_400],
      registers: [registry],
    }),
    roundsResumed: new Counter({
      name: 'eventrelay_delivery_rounds_resumed_total',
      help: 'Rounds whose requests were sent before Redis refused their commit (full), committed at a later run of their job instead of being sent again',
      registers: [registry],
    }),
    parked: new Counter({
      name: 'eventrelay_delivery_parked_total',
      help: "Jobs put back for later without an attempt: their destination was slow at its cap, its breaker was open, or the job waits for its turn at the destination's rate",
      registers: [registry],
    }),
    deadLettersEvicted: new Counter({
      name: 'eventrelay_delivery_dead_letters_evicted_total',
      help: 'Oldest dead letters dropped to stay under DELIVERY_DEAD_LETTER_MAX_PER_DESTINATION, by destination',
      labelNames: ['destination'] as const,
      registers: [registry],
    }),
    retryCapped: new Counter({
      name: 'eventrelay_delivery_retry_capped_total',
      help: 'Calls dead-lettered instead of held for a retry because their destination held DELIVERY_RETRY_MAX_PER_DESTINATION calls for a retry, by destination',
      labelNames: ['destination'] as const,
      registers: [registry],
    }),
    retryHeld: new Gauge({
      name: 'eventrelay_delivery_retry_held',
      help: 'Calls held in deliver jobs for a retry, by destination, as counted in Redis (every replica reports the same figure: aggregate with max)',
      labelNames: ['destination'] as const,
      registers: [registry],
      async collect() {
        let held: ReadonlyMap<string, number>;
        try {
          held = await retryHeld();
        } catch {
          // Redis did not answer: keep the last values (the failure is in eventrelay_redis_errors_total).
          return;
        }
        for (const destination of heldSeen) if (!held.has(destination)) this.set({ destination }, 0);
        for (const [destination, n] of held) {
          heldSeen.add(destination);
          this.set({ destination }, n);
        }
      },
    }),
    inFlight: new Gauge({
      name: 'eventrelay_delivery_in_flight',
      help: 'Requests open now, by destination',
      labelNames: ['destination'] as const,
      registers: [registry],
      collect() {
        for (const [destination, open] of gate.openRequests()) this.set({ destination }, open);
      },
    }),
    concurrencyLimit: new Gauge({
      name: 'eventrelay_delivery_concurrency_limit',
      help: "Requests this process may keep open to a destination now: its adaptive limit, at most the destination's maxConcurrentRequests",
      labelNames: ['destination'] as const,
      registers: [registry],
      collect() {
        for (const [destination, { limit }] of gate.limits()) this.set({ destination }, limit.concurrency);
      },
    }),
    rateLimit: new Gauge({
      name: 'eventrelay_delivery_rate_limit',
      help: 'Requests per second this process may start to a destination now (adaptive, at most its maxRequestsPerSecond); 0 when none is in force',
      labelNames: ['destination'] as const,
      registers: [registry],
      collect() {
        for (const [destination, { limit }] of gate.limits())
          this.set({ destination }, Number.isFinite(limit.rate) ? Math.round(limit.rate * 10) / 10 : 0);
      },
    }),
    breakerOpen: new Gauge({
      name: 'eventrelay_delivery_breaker_open',
      help: "1 while this process's circuit breaker for a destination is open (or probing), else 0",
      labelNames: ['destination'] as const,
      registers: [registry],
      collect() {
        for (const [destination, { breaker }] of gate.limits()) this.set({ destination }, breaker.state === 'closed' ? 0 : 1);
      },
    }),
    breakerChanges: new Counter({
      name: 'eventrelay_delivery_breaker_changes_total',
      help: 'Circuit breaker changes in this process, by destination and state entered (open, closed)',
      labelNames: ['destination', 'to'] as const,
      registers: [registry],
    }),
  };
}

export type DeliveryMetrics = ReturnType<typeof createDeliveryMetrics>;
