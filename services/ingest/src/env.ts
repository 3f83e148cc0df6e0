import { EnvProblem, commonEnv, custom, integer, loadEnvFrom, port, text, type EnvOf, type EnvSource } from '@eventrelay/config';

export const ingestEnvSpec = {
  ...commonEnv,
  INGEST_PORT: port({ default: 8080, describe: 'HTTP port of the intake and of its /healthz, /readyz and /metrics' }),
  INGEST_HOST: text({ default: '0.0.0.0', type: 'IP address or host name', describe: 'address the intake listens on' }),
  INGEST_RATE_LIMIT: integer({
    default: 10_000,
    min: 1,
    max: 1_000_000_000,
    describe:
      'calls per second per server source (a batch counts each of its calls), unless the source sets rateLimitPerSecond; taken at an even pace with one second of it allowed at once, and a request whose calls do not fit is refused whole with 429. Web and mobile sources: INGEST_CLIENT_RATE_LIMIT',
  }),
  INGEST_MAX_QUEUE_DEPTH: integer({
    default: 100_000,
    min: 0,
    max: 1_000_000_000,
    describe: 'waiting route jobs (one per flush, up to 1,000 calls each) above which the intake answers 503; 0 = no limit',
  }),
  INGEST_CLIENT_RATE_LIMIT: integer({
    default: 1_000,
    min: 1,
    max: 1_000_000_000,
    describe:
      'calls per second per web or mobile source (their write keys ship in pages and apps, so anyone may send with them), unless the source sets rateLimitPerSecond; refused as INGEST_RATE_LIMIT is',
  }),
  INGEST_REFUSAL_HOLD_MS: integer({
    default: 1000,
    min: 0,
    max: 10_000,
    describe:
      "how long the 429 of a request refused over its source's rate limit (at most until the same request fits) or budget is held before it is answered, so that a client sending as fast as it is answered sends a few requests a second per connection, not thousands; at most 1,000 answers are held at once per process, the rest are answered at once. 0 = answer at once",
  }),
  INGEST_SERVER_SOURCE_MEMORY_SHARE: shareOfMaxmemory(
    '0.3',
    "share of Redis's maxmemory one server source's dedupe claims may hold (its budget; the source's memoryShare overrides it); past it that source alone is answered 429 source_over_budget until its claims expire. 0 = no budget; none either when Redis has no maxmemory (sizing: docs/deployment.md)",
  ),
  INGEST_CLIENT_SOURCE_MEMORY_SHARE: shareOfMaxmemory(
    '0.1',
    'as INGEST_SERVER_SOURCE_MEMORY_SHARE, for a web or mobile source, whose public write key anyone may flood',
  ),
  INGEST_REDIS_MEMORY_LIMIT_RATIO: shareOfMaxmemory(
    '0.9',
    "share of Redis's maxmemory (used_memory / maxmemory, sampled every 500 ms) past which the intake answers 503 overloaded instead of storing calls, before Redis itself refuses writes; 0 = no guard. No guard either when Redis has no maxmemory",
  ),
  INGEST_HEADERS_TIMEOUT_MS: integer({
    default: 10_000,
    min: 100,
    max: 600_000,
    describe:
      'how long a client may take to send the request line and headers before its connection is closed (slow clients; at most INGEST_REQUEST_TIMEOUT_MS)',
  }),
  INGEST_REQUEST_TIMEOUT_MS: integer({
    default: 30_000,
    min: 100,
    max: 600_000,
    describe: 'how long a client may take to send a whole request, body included, before it is answered 408 and its connection closed',
  }),
  INGEST_KEEP_ALIVE_TIMEOUT_MS: integer({
    default: 65_000,
    min: 1_000,
    max: 600_000,
    describe:
      'how long an idle keep-alive connection stays open; keep it above the idle timeout of the load balancer in front (often 60 s)',
  }),
  INGEST_MAX_CONNECTIONS: integer({
    default: 10_000,
    min: 0,
    max: 1_000_000,
    describe: 'open connections per ingest process above which new ones are dropped at once (mind the file descriptor limit); 0 = no limit',
  }),
  INGEST_FLUSH_MS: integer({
    default: 5,
    min: 0,
    max: 100,
    describe:
      'how long an accepted request waits for others to share its write to Redis (one call batch and route job per flush, whatever the sources); 0 = until the end of the event-loop turn. Longer means fewer, larger jobs (less Redis per call) and a later answer',
  }),
  INGEST_DEDUPE_WINDOW_S: integer({
    default: 86_400,
    min: 0,
    max: 30 * 86_400,
    describe:
      'how long a messageId is remembered per source; 0 = no dedupe. Redis holds one key per call for this long (sizing: docs/deployment.md)',
  }),
  INGEST_DURABLE_REPLICAS: integer({
    default: 0,
    min: 0,
    max: 16,
    describe:
      'durable mode: how many Redis replicas must hold a flush\'s calls before its requests are answered 200 (one Redis WAIT per flush, not per call); fewer within INGEST_DURABLE_TIMEOUT_MS is 503 not_replicated. 0 = answer once the primary has them (docs/deployment.md, "Durable mode")',
  }),
  INGEST_DURABLE_TIMEOUT_MS: integer({
    default: 1000,
    min: 10,
    max: 1500,
    describe:
      'durable mode: how long a flush waits for INGEST_DURABLE_REPLICAS replicas to confirm its calls before its requests are answered 503 not_replicated (below the 2 s limit on an intake Redis command)',
  }),
  INGEST_DEBUG_EVENTS: integer({
    default: 100,
    min: 0,
    max: 10_000,
    describe: 'latest calls kept per source for the event debugger (admin API); 0 = none',
  }),
} as const;

export type IngestEnv = EnvOf<typeof ingestEnvSpec>;

/** A share of Redis's maxmemory, from 0 to 1. */
function shareOfMaxmemory(fallback: string, describe: string) {
  return custom({
    type: 'number, 0 to 1',
    default: fallback,
    describe,
    parse: (raw) => {
      const text = raw === undefined || raw.trim() === '' ? fallback : raw.trim();
      const n = Number(text);
      return /^\d*\.?\d+$/.test(text) && n >= 0 && n <= 1 ? n : new EnvProblem(`must be a number from 0 to 1, got "${raw}"`);
    },
  });
}

export function loadEnv(source: EnvSource): IngestEnv {
  return loadEnvFrom(ingestEnvSpec, source);
}
