/**
 * Full passes over the profiles, the audience queue's processor:
 * - backfill: when an audience is created (or what decides its membership changed), every
 *   profile is evaluated once; on creation each member gets one `true`. The pass keeps its cursor
 *   in Redis, so a pass cut off by a crash goes on where it stopped.
 * - periodic: every AUDIENCES_SYNC_INTERVAL_MS, the audiences whose condition has a time window
 *   are evaluated again for everybody (membership can change with time alone); changes only are
 *   delivered. Then outbox entries left by a crash are queued again, users whose profile
 *   expired (idle past AUDIENCES_PROFILE_TTL_DAYS) leave the index and every audience, profiles
 *   a source has not written for as long leave its count, and deletion tombstones too old to
 *   matter are pruned.
 * Profiles are read a page at a time, in userId order, so memory stays bounded at any size.
 */
import { DelayedError, type Job } from 'bullmq';
import { audienceFingerprint, type Audience, type AudienceJob, type ConfigSnapshot } from '@eventrelay/config';
import type { Logger } from '@eventrelay/runtime';
import type { ErasureTombstones } from '@eventrelay/stores';
import { isTimeWindowed } from '../domain/evaluate.js';
import type { Transition } from '../domain/membership.js';
import type { MembershipStore } from '../adapters/membership-store.js';
import type { ProfileStore } from '../adapters/profile-store.js';
import type { MembershipSync } from '../membership-sync.js';
import { countMembershipChanges, type AudiencesMetrics } from '../metrics.js';

export interface PassDeps {
  readonly profiles: Pick<ProfileStore, 'userIdsAfter' | 'read' | 'count' | 'expireIdle' | 'expireIdleSource'>;
  readonly membership: Pick<MembershipStore, 'passState' | 'savePassState' | 'stranded' | 'erase'>;
  readonly sync: Pick<MembershipSync, 'settle' | 'deliver'>;
  readonly config: {
    audience(id: string): Audience | undefined;
    readonly audiences: Iterable<Audience>;
    /** Every source, read by an audience or not: a source no audience reads now may be read again. */
    readonly snapshot: Pick<ConfigSnapshot, 'sources'>;
    refresh(): Promise<void>;
  };
  /** Deletion tombstones, pruned by the periodic pass once they can no longer matter. */
  readonly tombstones: Pick<ErasureTombstones, 'prune'>;
  readonly pageSize: number;
  /** Outbox entries older than this are taken as stranded by a crash. */
  readonly strandedAfterMs: number;
  readonly metrics: AudiencesMetrics;
  readonly logger: Logger;
  readonly clock: () => number;
  /** True once the process shuts down: a pass stops after its current page. */
  readonly stopping: () => boolean;
  /** Moves the active job back to delayed until `at` (runtime putJobBack). */
  readonly putBack: (job: Job, at: number, token: string | undefined) => Promise<void>;
}

export function createPassProcessor(deps: PassDeps): (job: Job<AudienceJob>, token?: string) => Promise<void> {
  return async (job, token) => {
    const data = job.data;
    const finished = data.kind === 'backfill' ? await backfill(deps, data.audienceId, data.fingerprint) : await periodic(deps);
    if (finished) return;
    // Handed back without spending an attempt: a backfill goes on from its saved cursor in
    // whichever process takes the job next; a periodic pass simply starts again.
    await deps.putBack(job, Date.now() + 1000, token);
    throw new DelayedError();
  };
}

/** False when it stopped for a shutdown. */
async function backfill(deps: PassDeps, audienceId: string, fingerprint: string): Promise<boolean> {
  const started = deps.clock();
  const current = () => {
    const a = deps.config.audience(audienceId);
    return a && audienceFingerprint(a) === fingerprint ? a : undefined;
  };
  // The job may come from another process that saw the audience first.
  if (!current()) await deps.config.refresh();
  const audience = current();
  if (!audience) {
    deps.logger.info({ audienceId }, 'audience.backfill_outdated');
    return true;
  }
  let state = await deps.membership.passState(audienceId);
  if (state.fingerprint === fingerprint && state.status === 'ready') return true;
  if (state.fingerprint !== fingerprint) {
    state = { fingerprint, status: 'backfilling', cursor: '', scanned: 0 };
    if (!(await deps.membership.savePassState(audienceId, state))) return true;
  }
  let changes = 0;
  const outcome = await walk(deps, state.cursor ?? '', state.scanned ?? 0, async (users, cursor, scanned) => {
    changes += (await settleCounted(deps, users, [audience])).length;
    // Stop when the audience was deleted or redefined meanwhile: its new pass takes over.
    return current() !== undefined && (await deps.membership.savePassState(audienceId, { cursor, scanned }));
  });
  if (outcome.stopped) return false;
  if (!outcome.finished) {
    deps.logger.info({ audienceId, scanned: outcome.scanned }, 'audience.backfill_outdated');
    return true;
  }
  await deps.membership.savePassState(audienceId, { status: 'ready', cursor: '', lastFullSyncAt: deps.clock() });
  const ms = deps.clock() - started;
  deps.metrics.passes.inc({ kind: 'backfill' });
  deps.metrics.passSeconds.observe({ kind: 'backfill' }, ms / 1000);
  deps.logger.info({ audienceId, scanned: outcome.scanned, changes, ms }, 'audience.backfilled');
  return true;
}

async function periodic(deps: PassDeps): Promise<boolean> {
  const started = deps.clock();
  const all = [...deps.config.audiences];
  // An audience still backfilling is evaluated by its backfill.
  const states = await Promise.all(all.map((a) => deps.membership.passState(a.id)));
  const windowed = all.filter(
    (a, i) => isTimeWindowed(a.condition) && states[i]?.status === 'ready' && states[i]?.fingerprint === audienceFingerprint(a),
  );
  let changes = 0;
  let scanned = 0;
  if (windowed.length > 0) {
    const outcome = await walk(deps, '', 0, async (users) => {
      changes += (await settleCounted(deps, users, windowed)).length;
      return true;
    });
    scanned = outcome.scanned;
    if (outcome.stopped) return false;
    await Promise.all(windowed.map((a) => deps.membership.savePassState(a.id, { lastFullSyncAt: deps.clock() })));
  }
  let requeued = 0;
  for (const a of all) {
    const stranded: Transition[] = await deps.membership.stranded(a.id, deps.clock() - deps.strandedAfterMs);
    await deps.sync.deliver(stranded);
    requeued += stranded.length;
  }
  if (requeued > 0) deps.metrics.requeued.inc(requeued);
  // Expired users leave their audiences silently, like erased ones: nothing is sent for them.
  let expired = 0;
  for (;;) {
    const gone = await deps.profiles.expireIdle(deps.pageSize);
    await deps.membership.erase(
      gone,
      all.map((a) => a.id),
    );
    expired += gone.length;
    if (gone.length < deps.pageSize || deps.stopping()) break;
  }
  // The same idle time ends a source's count of a profile, so the per-source cap frees room.
  for (const sourceId of deps.config.snapshot.sources.keys())
    for (;;) {
      const went = await deps.profiles.expireIdleSource(sourceId, deps.pageSize);
      if (went < deps.pageSize || deps.stopping()) break;
    }
  deps.metrics.profiles.set(await deps.profiles.count());
  // Every tombstone costs webhook-delivery a lookup per job: they go once no queued call can be older.
  const tombstonesPruned = await deps.tombstones.prune(deps.clock());
  const ms = deps.clock() - started;
  deps.metrics.passes.inc({ kind: 'periodic' });
  deps.metrics.passSeconds.observe({ kind: 'periodic' }, ms / 1000);
  deps.logger.info({ audiences: windowed.map((a) => a.id), scanned, changes, requeued, expired, tombstonesPruned, ms }, 'audience.synced');
  return true;
}

/** Pages through every profile after `cursor`; `page` returns false to stop early, a shutdown stops it too. */
async function walk(
  deps: PassDeps,
  cursor: string,
  scanned: number,
  page: (users: { userId: string; fields: Record<string, string> }[], cursor: string, scanned: number) => Promise<boolean>,
): Promise<{ finished: boolean; stopped?: boolean; scanned: number }> {
  for (;;) {
    if (deps.stopping()) return { finished: false, stopped: true, scanned };
    const userIds = await deps.profiles.userIdsAfter(cursor, deps.pageSize);
    if (userIds.length === 0) return { finished: true, scanned };
    const fields = await deps.profiles.read(userIds);
    scanned += userIds.length;
    cursor = userIds[userIds.length - 1] as string;
    if (
      !(await page(
        userIds.map((userId, i) => ({ userId, fields: fields[i] ?? {} })),
        cursor,
        scanned,
      ))
    )
      return { finished: false, scanned };
  }
}

async function settleCounted(
  deps: PassDeps,
  users: { userId: string; fields: Record<string, string> }[],
  audiences: readonly Audience[],
): Promise<Transition[]> {
  const changes = await deps.sync.settle(users, audiences);
  countMembershipChanges(deps.metrics, changes);
  return changes;
}
