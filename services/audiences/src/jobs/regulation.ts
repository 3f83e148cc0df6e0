/**
 * The regulation queue's processor. In pages of subjects: suppress (the router drops the users'
 * later calls), record the deletion tombstones (webhook-delivery drops their calls still queued),
 * forward the delete notifications (counted first in the deletion receipts), erase the users' profiles, audience membership,
 * event-debugger entries and the dead letters of their calls, and save the progress. Every step is idempotent and the record
 * says how many subjects are done, so a retried job redoes at most one page; the notifications'
 * job ids dedupe what that page queued before.
 */
import type { Job } from 'bullmq';
import { newRegulation, type ConfigSnapshot, type Regulation, type RegulationJob } from '@eventrelay/config';
import type { Logger } from '@eventrelay/runtime';
import type { AttemptLog, DeletionReceipts, ErasureTombstones, RegulationStore, SourceEvents } from '@eventrelay/stores';
import { affectedSources, deleteNotices, deletes, suppresses } from '../domain/regulation.js';
import type { DeliveryQueue } from '../adapters/delivery-queue.js';
import type { MembershipStore } from '../adapters/membership-store.js';
import type { ProfileStore } from '../adapters/profile-store.js';
import type { SuppressionWriter } from '../adapters/suppression-writer.js';
import type { AudiencesMetrics } from '../metrics.js';

export interface RegulationDeps {
  readonly regulations: Pick<RegulationStore, 'get' | 'save'>;
  readonly suppressions: Pick<SuppressionWriter, 'suppress'>;
  readonly deliveries: Pick<DeliveryQueue, 'enqueue'>;
  readonly profiles: Pick<ProfileStore, 'erase'>;
  readonly membership: Pick<MembershipStore, 'erase'>;
  readonly events: Pick<SourceEvents, 'eraseUsers'>;
  /** Where the erasure of each user and affected source is recorded for webhook-delivery. */
  readonly tombstones: Pick<ErasureTombstones, 'record'>;
  /** Where the planned delete notices are counted per destination (the deletion receipts). */
  readonly receipts: Pick<DeletionReceipts, 'plan'>;
  /** Removes the dead letters of the users' calls from the sources to one destination; returns how many. */
  readonly purgeDeadLetters: (destinationId: string, sourceIds: readonly string[], userIds: readonly string[]) => Promise<number>;
  /** Erases the bodies of the users' calls from the sources in one destination's attempt log. */
  readonly attempts: Pick<AttemptLog, 'eraseUsers'>;
  /** A fresh config (the regulation's sources and destinations as they are now). */
  readonly snapshot: () => Promise<ConfigSnapshot>;
  readonly pageSize: number;
  readonly metrics: AudiencesMetrics;
  readonly logger: Logger;
  readonly clock: () => number;
}

export function createRegulationProcessor(deps: RegulationDeps): (job: Job<RegulationJob>) => Promise<void> {
  return async (job) => {
    const started = deps.clock();
    const data = job.data;
    let record: Regulation = (await deps.regulations.get(data.id)) ?? newRegulation(data);
    if (record.status === 'finished') return;
    record = { ...record, status: 'running' };
    await deps.regulations.save(record);

    const snapshot = await deps.snapshot();
    const sources = affectedSources(data, snapshot);
    const audienceIds = [...snapshot.audiences.keys()];
    // The whole profile is erased, so it leaves the count of every source, not only the affected ones.
    const allSources = [...snapshot.sources.keys()];
    const subjects = data.request.subjectIds;
    // Every destination, enabled or not: a disabled one may still hold dead letters.
    const destinationIds = [...snapshot.destinations.keys()];
    let deadLettersPurged = 0;
    for (let from = record.counts.subjectsDone; from < subjects.length; from += deps.pageSize) {
      const page = subjects.slice(from, from + deps.pageSize);
      if (suppresses(data)) await deps.suppressions.suppress(page, data.request.sourceIds);
      let notices = 0;
      let erased = 0;
      if (deletes(data)) {
        // Before the page is saved done (and so before `finished`): from here on webhook-delivery
        // drops these users' calls received until now from every job still queued, so none of
        // them is delivered or left in Redis once those jobs run. A retried page records a later
        // time, which only erases more.
        await deps.tombstones.record(sources, page, deps.clock());
        const planned = deleteNotices(data, sources, snapshot, page);
        // Counted before they are queued, so an outcome always finds its notice planned; a page
        // planned again (a retried job) counts nothing twice.
        await deps.receipts.plan(
          data.id,
          planned.map((p) => ({ destinationId: p.destinationId, messageId: p.call.messageId })),
        );
        await deps.deliveries.enqueue(planned);
        notices = planned.length;
        erased = await deps.profiles.erase(page, allSources);
        await deps.membership.erase(page, audienceIds);
        for (const sourceId of sources) await deps.events.eraseUsers(sourceId, page);
        for (const destinationId of destinationIds) {
          deadLettersPurged += await deps.purgeDeadLetters(destinationId, sources, page);
          await deps.attempts.eraseUsers(destinationId, sources, page);
        }
      }
      const counts = record.counts;
      record = {
        ...record,
        counts: {
          subjectsDone: from + page.length,
          deleteNotices: counts.deleteNotices + notices,
          profilesErased: counts.profilesErased + erased,
          ...(suppresses(data) ? { suppressed: (counts.suppressed ?? 0) + page.length } : {}),
        },
      };
      await deps.regulations.save(record);
      deps.metrics.regulationSubjects.inc({ regulation_type: data.request.regulationType }, page.length);
    }
    record = { ...record, status: 'finished', finishedAt: new Date(deps.clock()).toISOString() };
    await deps.regulations.save(record);
    deps.logger.info(
      {
        regulationId: data.id,
        regulationType: data.request.regulationType,
        subjects: subjects.length,
        sources: sources.length,
        ...record.counts,
        deadLettersPurged,
        attempt: job.attemptsMade + 1,
        ms: deps.clock() - started,
      },
      'regulation.finished',
    );
  };
}
