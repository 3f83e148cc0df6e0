/**
 * Deterministic ids for deliveries, so that doing something twice names the same thing twice.
 *
 * callDeliveryId: one call's delivery to one destination. The same (destination, source,
 * messageId) always gives the same id: it is the id of the call's dead letter (one per call and
 * destination, written idempotently) and of a job holding just that call (a replay, an audience
 * identify, a delete notice), so queuing such a job twice delivers it once. The source is part of
 * it because messageIds are unique per source (that is how ingest dedupes them). Hashed so that
 * any messageId, however long or whatever characters it holds, gives a short id without ":"
 * (BullMQ's key separator).
 *
 * batchDeliveryJobId: the delivery job the router makes for the calls of one route job bound for
 * one destination. The batch id is ingest's (letters, digits, "-" and "_"), so the id is readable
 * and never the length of a callDeliveryId's hash.
 */
import { hash } from 'node:crypto';

export function callDeliveryId(destinationId: string, sourceId: string, messageId: string): string {
  // 22 base64url characters: 132 bits of the digest, plenty against collisions.
  return `${destinationId}-${hash('sha256', `${sourceId}\n${messageId}`, 'base64url').slice(0, 22)}`;
}

export function batchDeliveryJobId(destinationId: string, batchId: string): string {
  return `${destinationId}-b-${batchId}`;
}
