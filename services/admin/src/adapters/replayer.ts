/**
 * Puts dead letters back on the delivery queue. Each batch is enqueued first and removed from the
 * dead letters second: a crash in between leaves a letter that was also enqueued, and replaying
 * it again is harmless (same job id while queued; at worst one more delivery, which receivers
 * dedupe on X-Eventrelay-Message-Id). Never the other way round, which could lose a message.
 */
import type { Queue } from 'bullmq';
import { queueCatalog, type DeadLetter, type DeliverJob, type ReplayResult } from '@eventrelay/config';
import type { DeadLetterStore } from '@eventrelay/stores';
import { replayJob, type ReplaySelection } from '../domain/replay.js';

const BATCH = 500;

export class Replayer {
  constructor(
    private readonly deadLetters: Pick<DeadLetterStore, 'oldest' | 'byMessageIds' | 'remove'>,
    private readonly queue: Pick<Queue<DeliverJob>, 'addBulk'>,
    private readonly clock: () => number,
  ) {}

  async replay(destinationId: string, selection: ReplaySelection): Promise<ReplayResult> {
    if (selection.kind === 'messages') {
      const letters = await this.deadLetters.byMessageIds(destinationId, selection.messageIds);
      const found = new Set(letters.map((l) => l.job.call.messageId));
      return { replayed: await this.requeue(destinationId, letters), notFound: selection.messageIds.filter((m) => !found.has(m)) };
    }
    // Oldest first, and only what had died when the replay began: a replayed message that dies
    // again at once (say its receiver still answers 404) is not picked up a second time.
    const untilMs = this.clock();
    const sinceMs = selection.kind === 'since' ? selection.sinceMs : undefined;
    let replayed = 0;
    for (;;) {
      const letters = await this.deadLetters.oldest(destinationId, { limit: BATCH, sinceMs, untilMs });
      if (letters.length === 0) return { replayed, notFound: [] };
      const removed = await this.requeue(destinationId, letters);
      replayed += removed;
      if (removed === 0) return { replayed, notFound: [] };
    }
  }

  /** Returns how many letters were replayed (and removed). */
  private async requeue(destinationId: string, letters: readonly DeadLetter[]): Promise<number> {
    if (letters.length === 0) return 0;
    await this.queue.addBulk(
      letters.map(replayJob).map(({ jobId, data }) => ({ name: queueCatalog.deliver.jobName, data, opts: { jobId } })),
    );
    return this.deadLetters.remove(destinationId, letters);
  }
}
