/**
 * The profile queue's processor: each call updates its user's profile, then the user is evaluated
 * against the audiences its source feeds, and only changes are delivered. Calls of one user are
 * applied in order; different users at once. A failure throws and BullMQ retries the job: calls
 * already applied are recognised by their messageId and not counted twice.
 */
import type { Job } from 'bullmq';
import type { Audience, ProfileCall, ProfileJob } from '@eventrelay/config';
import type { Logger } from '@eventrelay/runtime';
import type { ProfileStore } from '../adapters/profile-store.js';
import type { MembershipSync } from '../membership-sync.js';
import { countMembershipChanges, type AudiencesMetrics } from '../metrics.js';

export interface ProfileWorkerDeps {
  readonly profiles: Pick<ProfileStore, 'applyAll'>;
  readonly sync: Pick<MembershipSync, 'settle'>;
  readonly audiencesOf: (sourceId: string) => readonly Audience[];
  readonly metrics: AudiencesMetrics;
  readonly logger: Logger;
  readonly clock: () => number;
}

export function createProfileProcessor(deps: ProfileWorkerDeps): (job: Job<ProfileJob>) => Promise<void> {
  return async (job) => {
    const started = deps.clock();
    const { sourceId, calls } = job.data;
    const byUser = new Map<string, ProfileCall[]>();
    for (const call of calls) byUser.set(call.userId, [...(byUser.get(call.userId) ?? []), call]);
    let applied = 0;
    let dropped = 0;
    const users = await Promise.all(
      [...byUser].map(async ([userId, own]) => {
        const result = await deps.profiles.applyAll(sourceId, own);
        applied += result.applied;
        dropped += result.dropped;
        return { userId, fields: result.fields };
      }),
    );
    const changes = await deps.sync.settle(users, deps.audiencesOf(sourceId));
    deps.metrics.calls.inc({ result: 'applied' }, applied);
    if (applied < calls.length) deps.metrics.calls.inc({ result: 'repeated' }, calls.length - applied);
    if (dropped > 0) deps.metrics.capped.inc(dropped);
    countMembershipChanges(deps.metrics, changes);
    deps.logger.info(
      {
        sourceId,
        calls: calls.length,
        users: byUser.size,
        applied,
        capped: dropped,
        changes: changes.length,
        attempt: job.attemptsMade + 1,
        ms: deps.clock() - started,
      },
      'profile.updated',
    );
  };
}
