import { commonEnv, integer, loadEnvFrom, port, type EnvOf, type EnvSource } from '@eventrelay/config';

export const audiencesEnvSpec = {
  ...commonEnv,
  AUDIENCES_METRICS_PORT: port({ default: 9103, describe: 'port of /healthz, /readyz and /metrics' }),
  AUDIENCES_CONCURRENCY: integer({ default: 16, min: 1, max: 1000, describe: 'profile jobs (routed intake requests) applied at once' }),
  AUDIENCES_SYNC_INTERVAL_MS: integer({
    default: 300_000,
    min: 100,
    max: 86_400_000,
    describe:
      'how often audiences with a time window (event withinDays) are evaluated again for every profile, and stranded membership changes queued again',
  }),
  AUDIENCES_PAGE_SIZE: integer({
    default: 500,
    min: 1,
    max: 10_000,
    describe: 'profiles read and evaluated at once by a full pass (backfill, periodic sync); bounds its memory',
  }),
  AUDIENCES_DEDUPE_WINDOW_S: integer({
    default: 1800,
    min: 1,
    max: 30 * 86_400,
    describe: 'how long the job id of a membership identify or delete notification blocks a repeat of it',
  }),
  PROFILE_MAX_TRAIT_BYTES: integer({
    default: 32_768,
    min: 1024,
    max: 1_048_576,
    describe: 'per user and source: bytes of traits (names plus JSON values) kept; past it, new or longer values are left out',
  }),
  PROFILE_MAX_EVENTS: integer({
    default: 100,
    min: 1,
    max: 10_000,
    describe: 'per user and source: distinct track event names counted; past it, new names are not counted',
  }),
  PROFILE_DAYS_KEPT: integer({
    default: 90,
    min: 90,
    max: 3660,
    describe: 'per event: UTC days of counts kept for withinDays conditions (at least the largest withinDays, 90)',
  }),
  AUDIENCES_PROFILE_TTL_DAYS: integer({
    default: 395,
    min: 0,
    max: 3660,
    describe:
      'days after its last call a profile expires (the user leaves every audience, nothing is sent); every call refreshes it; 0 = never',
  }),
  AUDIENCES_MAX_PROFILES_PER_SOURCE: integer({
    default: 100_000,
    min: 0,
    max: 1_000_000_000,
    describe:
      'profiles one source may hold; past it, calls still update the profiles it holds but start no new one (skipped, counted in eventrelay_audiences_profile_skipped_total); 0 = no cap',
  }),
} as const;

export type AudiencesEnv = EnvOf<typeof audiencesEnvSpec>;

export function loadEnv(source: EnvSource): AudiencesEnv {
  return loadEnvFrom(audiencesEnvSpec, source);
}
