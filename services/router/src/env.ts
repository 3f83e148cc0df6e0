import { commonEnv, integer, loadEnvFrom, oneOf, port, type EnvOf, type EnvSource } from '@eventrelay/config';

export const routerEnvSpec = {
  ...commonEnv,
  ROUTER_METRICS_PORT: port({ default: 9101, describe: 'port of /healthz, /readyz and /metrics' }),
  ROUTER_CONCURRENCY: integer({ default: 16, min: 1, max: 1000, describe: 'route jobs (ingest flushes) routed at once' }),
  ROUTER_FEED_PROFILES: oneOf(['true', 'false'], {
    default: 'true',
    describe:
      'put identify and track calls with a userId from the sources some audience reads on the profile queue for the audiences service; set false when no audiences service runs, or the queue grows without bound',
  }),
} as const;

export type RouterEnv = EnvOf<typeof routerEnvSpec>;

export function loadEnv(source: EnvSource): RouterEnv {
  return loadEnvFrom(routerEnvSpec, source);
}
