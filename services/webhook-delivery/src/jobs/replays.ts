/**
 * Counts the final outcome of replayed calls in their replay's progress (GET /admin/v1/
 * destinations/:id/replays/:replayId), queued on the job's commit so it lands with the dead letters
 * it reports. A job run again after a crash queues the same outcomes again, which the store takes as
 * the same outcome of the same call, never a second one.
 */
import type { ChainableCommander } from 'ioredis';
import type { DeliveryItem } from '@eventrelay/config';
import type { ReplayOutcome, ReplayProgressStore } from '@eventrelay/stores';

export type ReplayProgress = Pick<ReplayProgressStore, 'queueSettle'>;

export type ReplayOutcomes = Partial<Record<ReplayOutcome, readonly DeliveryItem[]>>;

/** Queues the outcomes of the replayed items among `outcomes`; returns whether any was queued. */
export function queueReplayOutcomes(
  progress: ReplayProgress,
  tx: ChainableCommander,
  destinationId: string,
  outcomes: ReplayOutcomes,
): boolean {
  let queued = false;
  for (const [outcome, items] of Object.entries(outcomes) as [ReplayOutcome, readonly DeliveryItem[]][]) {
    const byReplay = new Map<string, { sourceId: string; messageId: string }[]>();
    for (const item of items) {
      if (item.replayId === undefined) continue;
      let calls = byReplay.get(item.replayId);
      if (!calls) byReplay.set(item.replayId, (calls = []));
      calls.push({ sourceId: item.sourceId, messageId: item.call.messageId });
    }
    for (const [replayId, calls] of byReplay) {
      progress.queueSettle(tx, destinationId, replayId, outcome, calls);
      queued = true;
    }
  }
  return queued;
}
