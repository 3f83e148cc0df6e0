import { Counter, Gauge, Histogram, startAtZero, type Registry } from '@eventrelay/runtime';

export function createAudiencesMetrics(registry: Registry) {
  return {
    calls: startAtZero(
      new Counter({
        name: 'eventrelay_audiences_profile_calls_total',
        help: 'Identify and track calls applied to profiles, by result: applied, repeated (a retried job; applied before)',
        labelNames: ['result'] as const,
        registers: [registry],
      }),
      [{ result: 'applied' }, { result: 'repeated' }],
    ),
    capped: new Counter({
      name: 'eventrelay_audiences_profile_capped_total',
      help: 'Traits or event names left out of a profile because its per-source cap was reached',
      registers: [registry],
    }),
    skipped: new Counter({
      name: 'eventrelay_audiences_profile_skipped_total',
      help: 'Identify and track calls not applied because they would have started a profile for a source that holds AUDIENCES_MAX_PROFILES_PER_SOURCE already, by source',
      labelNames: ['source'] as const,
      registers: [registry],
    }),
    membershipChanges: startAtZero(
      new Counter({
        name: 'eventrelay_audiences_membership_changes_total',
        help: 'Users entering or leaving an audience (each becomes one identify per enabled destination)',
        labelNames: ['change'] as const,
        registers: [registry],
      }),
      [{ change: 'entered' }, { change: 'left' }],
    ),
    passes: startAtZero(
      new Counter({
        name: 'eventrelay_audiences_passes_total',
        help: 'Full passes over the profiles finished, by kind: backfill, periodic',
        labelNames: ['kind'] as const,
        registers: [registry],
      }),
      [{ kind: 'backfill' }, { kind: 'periodic' }],
    ),
    passSeconds: new Histogram({
      name: 'eventrelay_audiences_pass_seconds',
      help: 'Duration of a full pass over the profiles',
      labelNames: ['kind'] as const,
      buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
      registers: [registry],
    }),
    requeued: new Counter({
      name: 'eventrelay_audiences_outbox_requeued_total',
      help: 'Membership changes found in the outbox by the periodic sync and queued again (a crash came between commit and queue)',
      registers: [registry],
    }),
    regulationSubjects: startAtZero(
      new Counter({
        name: 'eventrelay_audiences_regulation_subjects_total',
        help: 'Regulation subjects handled',
        labelNames: ['regulation_type'] as const,
        registers: [registry],
      }),
      [{ regulation_type: 'DELETE' }, { regulation_type: 'SUPPRESS' }, { regulation_type: 'SUPPRESS_WITH_DELETE' }],
    ),
    profiles: new Gauge({
      name: 'eventrelay_audiences_profiles',
      help: 'Profiles stored, as of the last full pass',
      registers: [registry],
    }),
  };
}

export type AudiencesMetrics = ReturnType<typeof createAudiencesMetrics>;

/** Counts membership changes by direction (each becomes one identify per enabled destination). */
export function countMembershipChanges(metrics: AudiencesMetrics, changes: readonly { member: boolean }[]): void {
  const entered = changes.filter((c) => c.member).length;
  if (entered > 0) metrics.membershipChanges.inc({ change: 'entered' }, entered);
  if (changes.length > entered) metrics.membershipChanges.inc({ change: 'left' }, changes.length - entered);
}
