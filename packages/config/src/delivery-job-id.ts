/**
 * The delivery job id: the same (destination, source, messageId) always gives the same id, so a
 * call routed twice (a route job retried after a crash, or two in-flight copies that ingest saw in
 * different ticks) becomes one delivery. The source is part of it because messageIds are unique
 * per source (that is how ingest dedupes them). Hashed so that any messageId, however long or
 * whatever characters it holds, gives a short id without ":" (BullMQ's key separator).
 */
import { hash } from 'node:crypto';

export function deliveryJobId(destinationId: string, sourceId: string, messageId: string): string {
  // 22 base64url characters: 132 bits of the digest, plenty against collisions.
  return `${destinationId}-${hash('sha256', `${sourceId}\n${messageId}`, 'base64url').slice(0, 22)}`;
}
