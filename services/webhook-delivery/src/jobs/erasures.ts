/**
 * A job's calls less those a deletion regulation erased (docs/spec.md §6, domain/erasure.ts),
 * decided before anything is sent: an erased call is not sent, not dead-lettered and not kept for
 * a retry, so it leaves Redis with the job's next commit (or with the job itself).
 */
import type { DeliveryItem } from '@eventrelay/config';
import type { ErasureTombstones } from '@eventrelay/stores';
import { erasableSubjects, siftErased } from '../domain/erasure.js';

export type Tombstones = Pick<ErasureTombstones, 'count' | 'erasedAt'>;

/**
 * `count`: the number of tombstones, read beside the job's batch; 0 means there is nothing to look
 * up. Without it (a job holding its calls, which reads nothing else) the calls' subjects are looked
 * up at once: one read either way.
 */
export async function withoutErased(
  tombstones: Tombstones,
  items: readonly DeliveryItem[],
  count?: number,
): Promise<{ items: DeliveryItem[]; erased: number }> {
  if (count === 0) return { items: [...items], erased: 0 };
  const subjects = erasableSubjects(items);
  if (subjects.length === 0) return { items: [...items], erased: 0 };
  const { kept, erased } = siftErased(items, subjects, await tombstones.erasedAt(subjects));
  return { items: kept, erased: erased.length };
}
