import { EnvProblem, commonEnv, custom, integer, loadEnvFrom, port, text, type EnvOf, type EnvSource } from '@eventrelay/config';
import { parseAdminTokens } from './domain/tokens.js';

export const adminEnvSpec = {
  ...commonEnv,
  ADMIN_PORT: port({ default: 8081, describe: 'HTTP port of the admin API (and its /healthz /readyz /metrics)' }),
  ADMIN_HOST: text({ default: '0.0.0.0', describe: 'address the admin API listens on' }),
  ADMIN_TOKEN: custom({
    describe: 'bearer token(s) for /admin/v1; several separated by commas let a token be rotated without downtime',
    secret: true,
    parse: (raw) => {
      const tokens = parseAdminTokens(raw);
      return typeof tokens === 'string' ? new EnvProblem(tokens) : tokens;
    },
  }),
  ADMIN_AUDIT_MAX: integer({ default: 10_000, min: 1, max: 10_000_000, describe: 'audit log entries kept' }),
} as const;

export type AdminEnv = EnvOf<typeof adminEnvSpec>;

export function loadEnv(source: EnvSource): AdminEnv {
  return loadEnvFrom(adminEnvSpec, source);
}
