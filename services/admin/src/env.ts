import { EnvProblem, commonEnv, custom, integer, loadEnvFrom, port, text, type EnvOf, type EnvSource } from '@eventrelay/config';
import { parseAdminTokens } from './domain/tokens.js';

export const adminEnvSpec = {
  ...commonEnv,
  ADMIN_PORT: port({ default: 8081, describe: 'HTTP port of the admin API and of its /healthz, /readyz and /metrics' }),
  ADMIN_HOST: text({ default: '0.0.0.0', type: 'IP address or host name', describe: 'address the admin API listens on' }),
  ADMIN_TOKEN: custom({
    describe:
      'bearer token(s) for /admin/v1 (generate one with openssl rand -hex 32); several separated by commas let a token be rotated without downtime',
    type: 'comma-separated tokens, each 16 to 256 characters of letters, digits and . _ ~ + / = -',
    required: true,
    secret: true,
    parse: (raw) => {
      const tokens = parseAdminTokens(raw);
      return typeof tokens === 'string' ? new EnvProblem(tokens) : tokens;
    },
  }),
  ADMIN_CONSOLE_DIR: text({
    type: 'directory path',
    describe:
      'directory of the built web console served at /console/ (index.html and assets/); by default the dist folder of the @eventrelay/console package, which `pnpm build` fills',
  }),
  ADMIN_INTAKE_URL: custom({
    describe: "the intake's public base URL, as senders reach it (GET /admin/v1/info; the console's copy-paste snippets)",
    type: 'http or https URL',
    default: 'http://localhost:8080',
    parse: (raw) => intakeUrl(raw?.trim() || 'http://localhost:8080'),
  }),
  ADMIN_AUDIT_MAX: integer({ default: 10_000, min: 1, max: 10_000_000, describe: 'audit log entries kept (the newest)' }),
} as const;

function intakeUrl(raw: string): string | EnvProblem {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return new EnvProblem(`must be an http or https URL such as https://events.example.com, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return new EnvProblem(`must be an http or https URL such as https://events.example.com, got "${raw}" (${url.protocol})`);
  // Shown as a base for paths such as /v1/track: without a trailing slash.
  return raw.replace(/\/+$/, '');
}

export type AdminEnv = EnvOf<typeof adminEnvSpec>;

export function loadEnv(source: EnvSource): AdminEnv {
  return loadEnvFrom(adminEnvSpec, source);
}
