/**
 * Puts one call on the route queue exactly as ingest does (services/ingest/src/adapters/
 * intake-writer.ts): the call stored in a call batch of its own, its route entry written and the
 * route job added, in ONE MULTI, so router and webhook-delivery handle it like any call.
 */
import { randomUUID } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import type { Queue } from 'bullmq';
import type { NormalizedCall, RouteJob } from '@eventrelay/config';
import { execAll, queueJobAdd } from '@eventrelay/runtime';
import type { CallBatches } from '@eventrelay/stores';

export class IntakeQueue {
  constructor(
    /** The batches and route queue of a source's route shard. */
    private readonly laneOf: (sourceId: string) => { batches: Pick<CallBatches, 'queueIntake'>; queue: Queue<RouteJob> },
    /** A MULTI on which route jobs can be added (runtime transactionsOn of the route queue). */
    private readonly transaction: () => ChainableCommander,
    private readonly clock: () => number,
  ) {}

  async route(sourceId: string, call: NormalizedCall): Promise<void> {
    const batchId = randomUUID();
    const { batches, queue } = this.laneOf(sourceId);
    const tx = this.transaction();
    // An operator's single call: not counted against the source's own rate limit, and its fresh
    // messageId needs no dedupe claim.
    const verdicts = batches.queueIntake(tx, batchId, [{ sourceId, ratePerSecond: 0, calls: [call], callsJson: JSON.stringify([call]) }], {
      nowMs: this.clock(),
      dedupeTtlS: 0,
    });
    queueJobAdd(tx, queue, { batchId }, batchId);
    const answers = await execAll(tx);
    const [verdict] = verdicts(answers[1]);
    if (verdict?.kind !== 'stored') throw new Error(`the intake step did not store the test call (${JSON.stringify(verdict)})`);
  }
}
