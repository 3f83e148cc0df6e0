/**
 * Puts calls the audiences service makes (membership identifies, delete notices) on the delivery
 * queue, one job per call and destination, with deterministic job ids (callDeliveryId) and
 * deduplication, so queuing one twice delivers it once.
 */
import type { Queue } from 'bullmq';
import { queueCatalog, type DeliverJob } from '@eventrelay/config';
import type { PlannedDelivery } from '../domain/membership.js';

export class DeliveryQueue {
  constructor(
    /** The deliver queue of a destination's shard. */
    private readonly queueOf: (destinationId: string) => Pick<Queue<DeliverJob>, 'addBulk'>,
    private readonly dedupeWindowMs: number,
  ) {}

  async enqueue(deliveries: readonly PlannedDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    // One addBulk per shard: each is one MULTI, which stays within its queue's slot.
    const byQueue = new Map<Pick<Queue<DeliverJob>, 'addBulk'>, PlannedDelivery[]>();
    for (const d of deliveries) {
      const queue = this.queueOf(d.destinationId);
      const group = byQueue.get(queue);
      if (group) group.push(d);
      else byQueue.set(queue, [d]);
    }
    await Promise.all(
      [...byQueue].map(([queue, group]) =>
        queue.addBulk(
          group.map((d) => ({
            name: queueCatalog.deliver.jobName,
            data: { destinationId: d.destinationId, calls: [{ sourceId: d.sourceId, call: d.call }] },
            opts: { jobId: d.jobId, deduplication: { id: d.jobId, ttl: this.dedupeWindowMs } },
          })),
        ),
      ),
    );
  }
}
