import { Counter, Gauge, Histogram, LATENCY_BUCKETS, type Registry } from '@eventrelay/runtime';
import type { DestinationGate } from './destination-gate.js';

type PerDestination = () => Promise<ReadonlyMap<string, number>>;

/** What the per-destination totals in Redis are read with at each scrape (one HGETALL per shard each). */
export interface HeldReaders {
  /** Calls held for a retry. */
  readonly retryHeld: PerDestination;
  /** Their bytes. */
  readonly retryHeldBytes: PerDestination;
  /** Bytes of the dead letters. */
  readonly deadLetterBytes: PerDestination;
}

/**
 * A gauge by destination read from a Redis hash at each scrape (every replica reports the same
 * figure). Destinations once reported are shown at 0 once their field is gone (the hashes have no
 * field at 0), so a drained backlog reads 0 rather than a series that stops.
 */
function heldGauge(registry: Registry, name: string, help: string, read: PerDestination): Gauge<'destination'> {
  const seen = new Set<string>();
  return new Gauge({
    name,
    help,
    labelNames: ['destination'] as const,
    registers: [registry],
    async collect() {
      let held: ReadonlyMap<string, number>;
      try {
        held = await read();
      } catch {
        // Redis did not answer: keep the last values (the failure is in eventrelay_redis_errors_total).
        return;
      }
      for (const destination of seen) if (!held.has(destination)) this.set({ destination }, 0);
      for (const [destination, n] of held) {
        seen.add(destination);
        this.set({ destination }, n);
      }
    },
  });
}

/**
 * `gate`: the requests open now, the adaptive limits and the breakers, by destination (read at
 * each scrape, so sending costs nothing extra). `held`: what each destination holds for a retry
 * and in dead letters, read from Redis at each scrape.
 */
export function createDeliveryMetrics(registry: Registry, gate: Pick<DestinationGate, 'openRequests' | 'limits'>, held: HeldReaders) {
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
      help: 'Oldest dead letters dropped to stay under DELIVERY_DEAD_LETTER_MAX_PER_DESTINATION or DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION, by destination',
      labelNames: ['destination'] as const,
      registers: [registry],
    }),
    retryCapped: new Counter({
      name: 'eventrelay_delivery_retry_capped_total',
      help: 'Calls dead-lettered instead of held for a retry because their destination held DELIVERY_RETRY_MAX_PER_DESTINATION calls, or DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION bytes of calls, for a retry, by destination',
      labelNames: ['destination'] as const,
      registers: [registry],
    }),
    retryHeld: heldGauge(
      registry,
      'eventrelay_delivery_retry_held',
      'Calls held in deliver jobs for a retry, by destination, as counted in Redis (every replica reports the same figure: aggregate with max)',
      held.retryHeld,
    ),
    retryHeldBytes: heldGauge(
      registry,
      'eventrelay_delivery_retry_held_bytes',
      "Bytes of the calls held in deliver jobs for a retry (each call's JSON, its retry state counted as 200 B), by destination, as totalled in Redis; capped by DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION (every replica reports the same figure: aggregate with max)",
      held.retryHeldBytes,
    ),
    deadLetterBytes: heldGauge(
      registry,
      'eventrelay_delivery_dead_letter_bytes',
      'Bytes of the dead letters kept (their JSON), by destination, as totalled in Redis; capped by DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION (every replica reports the same figure: aggregate with max)',
      held.deadLetterBytes,
    ),
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
