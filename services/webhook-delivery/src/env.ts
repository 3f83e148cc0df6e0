import {
  EnvProblem,
  commonEnv,
  custom,
  integer,
  loadEnvFrom,
  oneOf,
  port,
  text,
  type EnvOf,
  type EnvSource,
  type EnvVar,
} from '@eventrelay/config';
import { parseNetworkList } from './domain/networks.js';

/** Checked here, kept as text (it is logged at start); the service parses it again. */
function networks(opts: { describe: string }): EnvVar<readonly string[]> {
  return custom({
    describe: opts.describe,
    type: 'comma-separated CIDR networks',
    parse(raw) {
      const { networks: parsed, invalid } = parseNetworkList(raw ?? '');
      if (invalid.length > 0)
        return new EnvProblem(
          `must be a comma-separated list of CIDR networks such as 10.1.0.0/16 or fd00::/8; not networks: ${invalid.map((i) => `"${i}"`).join(', ')}`,
        );
      return Object.freeze(parsed.map((n) => n.text));
    },
  });
}

const MIB = 1024 * 1024;
/** The smallest byte cap: far above one call (32 KB at most) with its retry state or letter. */
const MIN_BYTE_CAP = MIB;
const MAX_BYTE_CAP = 64 * 1024 * MIB;

/**
 * A per-destination byte cap, in bytes; `off`: 0 also accepted, meaning no cap. A cap below
 * MIN_BYTE_CAP would refuse nearly every call, so it is refused at start instead.
 */
function byteCap(opts: { default: number; off: boolean; describe: string }): EnvVar<number> {
  const range = `${opts.off ? '0 (no cap) or ' : ''}${MIN_BYTE_CAP} (1 MiB) to ${MAX_BYTE_CAP} (64 GiB)`;
  return custom({
    describe: opts.describe,
    type: `bytes, ${range}`,
    default: String(opts.default),
    parse(raw) {
      if (raw === undefined || raw.trim() === '') return opts.default;
      const text = raw.trim();
      if (!/^\d+$/.test(text)) return new EnvProblem(`must be a whole number of bytes, ${range}; got "${raw}"`);
      const n = Number(text);
      if ((n === 0 && opts.off) || (n >= MIN_BYTE_CAP && n <= MAX_BYTE_CAP)) return n;
      return new EnvProblem(`must be ${range} bytes, got ${n}`);
    },
  });
}

export const deliveryEnvSpec = {
  ...commonEnv,
  DELIVERY_METRICS_PORT: port({ default: 9102, describe: 'port of /healthz, /readyz and /metrics' }),
  DELIVERY_TIMEOUT_MS: integer({
    default: 5000,
    min: 100,
    max: 60_000,
    describe: 'limit on one attempt at one URL: connect, response headers and body',
  }),
  RETRY_WINDOW_MS: integer({
    default: 14_400_000,
    min: 1000,
    max: 7 * 86_400_000,
    describe: 'how long after its first attempt a call is retried before it is dead-lettered',
  }),
  DELIVERY_RETRY_BASE_MS: integer({
    default: 1000,
    min: 1,
    max: 3_600_000,
    describe: 'backoff ceiling after the first failed round; doubles per round (full jitter)',
  }),
  DELIVERY_RETRY_MAX_MS: integer({ default: 1_800_000, min: 1, max: 86_400_000, describe: 'largest backoff ceiling between two rounds' }),
  DELIVERY_CONCURRENCY: integer({
    default: 256,
    min: 1,
    max: 10_000,
    describe: 'delivery jobs (each holding one or more calls) one process works on at once',
  }),
  DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: integer({
    default: 64,
    min: 1,
    max: 10_000,
    describe:
      'requests one process keeps open to one destination at once; jobs beyond it wait briefly or are parked, so a slow receiver cannot take every worker slot (see docs/delivery.md)',
  }),
  DELIVERY_CONNECTIONS_PER_ORIGIN: integer({
    default: 64,
    min: 1,
    max: 10_000,
    describe: 'keep-alive connections per receiver origin (scheme, host and port)',
  }),
  DELIVERY_LOG_MAX_PER_DESTINATION: integer({
    default: 1000,
    min: 1,
    max: 1_000_000,
    describe: 'attempt log entries kept per destination',
  }),
  DELIVERY_LOG_DETAIL: oneOf(['all', 'failures', 'none'] as const, {
    default: 'all',
    describe:
      "which attempts keep their request and answer (headers, body excerpts) in the attempt log: every attempt, failed attempts only, or none (a test send too: the console then shows its status and latency only); the bodies are most of the log's size and of its cost per call (docs/delivery.md)",
  }),
  DELIVERY_DEAD_LETTER_MAX_PER_DESTINATION: integer({
    default: 100_000,
    min: 1,
    max: 100_000_000,
    describe: 'dead letters kept per destination; the oldest are evicted (and counted in a metric) beyond it',
  }),
  DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION: byteCap({
    default: 64 * MIB,
    off: false,
    describe:
      'bytes of dead letters (their JSON) kept per destination, besides the count; the oldest are evicted beyond it, as at the count cap. 64 MiB: about 65,000 letters of 1 KB, 2,000 of the largest calls (docs/deployment.md, "Sizing Redis: failing destinations")',
  }),
  DELIVERY_RETRY_MAX_PER_DESTINATION: integer({
    default: 100_000,
    min: 0,
    max: 100_000_000,
    describe:
      'calls held for a retry per destination (in its deliver jobs, counted in Redis); calls that would go beyond it are dead-lettered instead (counted in a metric, alerted, audited once per episode; see docs/delivery.md); 0 = no cap',
  }),
  DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION: byteCap({
    default: 64 * MIB,
    off: true,
    describe:
      'bytes of the calls held for a retry per destination (each call\'s JSON, its retry state counted as 200 B, totalled in Redis), besides the count; calls that would go beyond it are dead-lettered instead, as at the count cap. 64 MiB: about 96,000 calls of 500 B with their retry state (about the count cap), 2,000 of the largest (docs/deployment.md, "Sizing Redis: failing destinations"); 0 = no cap',
  }),
  WEBHOOK_ALLOWED_NETWORKS: networks({
    describe:
      'networks webhooks may reach although they are loopback, private, link-local, CGNAT or multicast (e.g. 10.20.0.0/16); unset, the SSRF guard refuses every such address',
  }),
  WEBHOOK_CA_FILE: text({
    type: 'file path',
    describe: "PEM file of CA certificates trusted for https receivers in addition to Node's list (NODE_EXTRA_CA_CERTS works too)",
  }),
  NOTIFY_WEBHOOK_URL: text({
    pattern: /^https?:\/\/[^\s/]+\S*$/i,
    hint: 'an absolute http or https URL',
    secret: true,
    describe:
      'operator notifications (circuit opened or closed, destination or URL disabled, dead letters growing) are POSTed here as JSON, besides the audit log; unset, they go to the audit log only (docs/delivery.md, "Operator notifications")',
  }),
  NOTIFY_WEBHOOK_SECRET: text({
    secret: true,
    describe:
      'signs the notifications with Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature); a whsec_ secret or any text',
  }),
  NODE_EXTRA_CA_CERTS: text({
    type: 'file path',
    describe: "Node's own list of extra CA certificates (PEM); honoured alongside WEBHOOK_CA_FILE when both are set",
  }),
} as const;

export type DeliveryEnv = EnvOf<typeof deliveryEnvSpec>;

export function loadEnv(source: EnvSource): DeliveryEnv {
  return loadEnvFrom(deliveryEnvSpec, source);
}
