import { commonEnv, integer, loadEnvFrom, oneOf, port, type EnvOf, type EnvSource } from '@eventrelay/config';

export const routerEnvSpec = {
  ...commonEnv,
  ROUTER_METRICS_PORT: port({ default: 9101, describe: 'port of /healthz, /readyz and /metrics' }),
  ROUTER_CONCURRENCY: integer({ default: 16, min: 1, max: 1000, describe: 'route jobs (intake requests) expanded at once' }),
  ROUTER_DEDUPE_WINDOW_S: integer({
    default: 1800,
    min: 1,
    max: 30 * 86_400,
    describe: 'how long a delivery job id is remembered, so that a call routed again within it is not delivered again (covers route-job retries, about 17 min; ingest dedupes client resends); about 150 B of Redis per delivery',
  }),
  ROUTER_FEED_PROFILES: oneOf(['true', 'false'], {
    default: 'true',
    describe: 'put identify and track calls with a userId on the profile queue for the audiences service; set false when no audiences service runs, or the queue grows without bound',
  }),
} as const;

export type RouterEnv = EnvOf<typeof routerEnvSpec>;

export function loadEnv(source: EnvSource): RouterEnv {
  return loadEnvFrom(routerEnvSpec, source);
}
