/**
 * Puts dead letters back on the delivery queue. Each batch is enqueued first and removed from the
 * dead letters second: a crash in between leaves a letter that was also enqueued, and replaying
 * it again is harmless (same job id while queued; at worst one more delivery, which receivers
 * dedupe on X-Eventrelay-Message-Id). Never the other way round, which could lose a message.
 * Each batch is counted in the replay's progress before it is enqueued, so no outcome can arrive
 * for a call the progress does not know yet.
 */
import type { Queue } from 'bullmq';
import { deadLetterMatches, queueCatalog, type DeadLetter, type DeliverJob, type ReplayResult } from '@eventrelay/config';
import type { DeadLetterStore, ReplayProgressStore } from '@eventrelay/stores';
import { replayJob, type ReplaySelection } from '../domain/replay.js';

const BATCH = 500;

export class Replayer {
  constructor(
    private readonly deadLetters: Pick<DeadLetterStore, 'oldest' | 'byMessageIds' | 'remove'>,
    private readonly progress: Pick<ReplayProgressStore, 'begin' | 'plan'>,
    /** The deliver queue of a destination's shard. */
    private readonly queueOf: (destinationId: string) => Pick<Queue<DeliverJob>, 'addBulk'>,
    private readonly clock: () => number,
  ) {}

  async replay(destinationId: string, selection: ReplaySelection, replayId: string): Promise<ReplayResult> {
    await this.progress.begin(replayId, destinationId, new Date(this.clock()).toISOString());
    if (selection.kind === 'messages') {
      const letters = await this.deadLetters.byMessageIds(destinationId, selection.messageIds);
      const found = new Set(letters.map((l) => l.job.call.messageId));
      const replayed = await this.requeue(destinationId, letters, replayId);
      return { replayId, replayed, notFound: selection.messageIds.filter((m) => !found.has(m)) };
    }
    // Oldest first, and only what had died when the replay began: a replayed message that dies
    // again at once (say its receiver still answers 404) is not picked up a second time.
    const filter = selection.kind === 'filter' ? selection.filter : undefined;
    const untilMs = Math.min(this.clock(), filter?.untilMs ?? Infinity);
    const sinceMs = selection.kind === 'since' ? selection.sinceMs : filter?.sinceMs;
    let replayed = 0;
    // Letters the filter passed over stay in the index. Each read goes on from the time of the last
    // one read, skipping only the passed-over letters of that very millisecond: letters evicted or
    // removed meanwhile (the cap, another replay, a deletion) are older or gone, so they cannot
    // shift the read past a letter that matches, as a count of every letter passed over would.
    let fromMs = sinceMs;
    let passedAtFrom = 0;
    for (;;) {
      const letters = await this.deadLetters.oldest(destinationId, { limit: BATCH, sinceMs: fromMs, untilMs, offset: passedAtFrom });
      const last = letters[letters.length - 1];
      if (last === undefined) return { replayId, replayed, notFound: [] };
      const chosen = filter === undefined ? letters : letters.filter((l) => deadLetterMatches(l, filter));
      const lastMs = Date.parse(last.deadAt);
      const passedAtLast = letters.filter((l) => !chosen.includes(l) && Date.parse(l.deadAt) === lastMs).length;
      passedAtFrom = (fromMs === lastMs ? passedAtFrom : 0) + passedAtLast;
      fromMs = lastMs;
      if (chosen.length === 0) continue;
      const removed = await this.requeue(destinationId, chosen, replayId);
      replayed += removed;
      if (removed === 0) return { replayId, replayed, notFound: [] };
    }
  }

  /** Returns how many letters were replayed (and removed). */
  private async requeue(destinationId: string, letters: readonly DeadLetter[], replayId: string): Promise<number> {
    if (letters.length === 0) return 0;
    await this.progress.plan(
      destinationId,
      replayId,
      letters.map((l) => ({ sourceId: l.job.sourceId, messageId: l.job.call.messageId })),
    );
    await this.queueOf(destinationId).addBulk(
      letters.map((l) => replayJob(l, replayId)).map(({ jobId, data }) => ({ name: queueCatalog.deliver.jobName, data, opts: { jobId } })),
    );
    return this.deadLetters.remove(destinationId, letters);
  }
}
