/**
 * The profile queue's processor: each call updates its user's profile, then the user is evaluated
 * against the audiences its source feeds, and only changes are delivered. Calls of one user are
 * applied in order; different users at once. A failure throws and BullMQ retries the job: calls
 * already applied are recognised by their messageId and not counted twice.
 *
 * A source at its profile cap (AUDIENCES_MAX_PROFILES_PER_SOURCE) still updates the profiles it
 * holds; the calls of users it holds none of are skipped, counted by source, and logged at most
 * once a minute per source. The count is read once per job, before its calls are applied, so jobs
 * running at once may each let a few new users in: a source can pass its cap by at most the new
 * users of the jobs in flight (AUDIENCES_CONCURRENCY jobs per process, each one ingest flush).
 */
import type { Job } from 'bullmq';
import type { Audience, ProfileCall, ProfileJob } from '@eventrelay/config';
import type { Logger } from '@eventrelay/runtime';
import type { ProfileStore } from '../adapters/profile-store.js';
import { admitProfiles, tallyRefusals, type RefusalTally } from '../domain/profile-cap.js';
import type { MembershipSync } from '../membership-sync.js';
import { countMembershipChanges, type AudiencesMetrics } from '../metrics.js';

export interface ProfileWorkerDeps {
  readonly profiles: Pick<ProfileStore, 'applyAll' | 'standing'>;
  readonly sync: Pick<MembershipSync, 'settle'>;
  readonly audiencesOf: (sourceId: string) => readonly Audience[];
  /** AUDIENCES_MAX_PROFILES_PER_SOURCE; 0 = no cap. */
  readonly maxProfilesPerSource: number;
  readonly metrics: AudiencesMetrics;
  readonly logger: Logger;
  readonly clock: () => number;
}

/** How often a source past its cap is logged at most: a flood past it must not become a log flood. */
const CAP_LOG_INTERVAL_MS = 60_000;

export function createProfileProcessor(deps: ProfileWorkerDeps): (job: Job<ProfileJob>) => Promise<void> {
  const refusals = new Map<string, RefusalTally>();
  return async (job) => {
    const started = deps.clock();
    const { sourceId, calls } = job.data;
    const byUser = new Map<string, ProfileCall[]>();
    for (const call of calls) byUser.set(call.userId, [...(byUser.get(call.userId) ?? []), call]);
    const userIds = [...byUser.keys()];
    const standing = await deps.profiles.standing(sourceId, userIds);
    const { admitted, refused } = standing
      ? admitProfiles(
          userIds.map((userId, i) => ({ userId, known: standing.known[i] === true })),
          standing.held,
          deps.maxProfilesPerSource,
        )
      : { admitted: new Set(userIds), refused: [] };
    let applied = 0;
    let dropped = 0;
    const users = await Promise.all(
      [...byUser]
        .filter(([userId]) => admitted.has(userId))
        .map(async ([userId, own]) => {
          const result = await deps.profiles.applyAll(sourceId, own);
          applied += result.applied;
          dropped += result.dropped;
          return { userId, fields: result.fields };
        }),
    );
    const skipped = refused.reduce((n, userId) => n + (byUser.get(userId)?.length ?? 0), 0);
    if (skipped > 0) reportSkipped(sourceId, skipped, standing?.held ?? 0);
    const changes = await deps.sync.settle(users, deps.audiencesOf(sourceId));
    deps.metrics.calls.inc({ result: 'applied' }, applied);
    if (applied + skipped < calls.length) deps.metrics.calls.inc({ result: 'repeated' }, calls.length - applied - skipped);
    if (dropped > 0) deps.metrics.capped.inc(dropped);
    countMembershipChanges(deps.metrics, changes);
    deps.logger.info(
      {
        sourceId,
        calls: calls.length,
        users: byUser.size,
        applied,
        capped: dropped,
        ...(skipped > 0 ? { skipped } : {}),
        changes: changes.length,
        attempt: job.attemptsMade + 1,
        ms: deps.clock() - started,
      },
      'profile.updated',
    );
  };

  function reportSkipped(sourceId: string, skipped: number, held: number): void {
    deps.metrics.skipped.inc({ source: sourceId }, skipped);
    const step = tallyRefusals(refusals.get(sourceId), skipped, deps.clock(), CAP_LOG_INTERVAL_MS);
    refusals.set(sourceId, step.tally);
    if (step.log)
      deps.logger.warn(
        { sourceId, cap: deps.maxProfilesPerSource, profiles: held, skipped: step.log.refused },
        'profile.source_cap_reached',
      );
  }
}
