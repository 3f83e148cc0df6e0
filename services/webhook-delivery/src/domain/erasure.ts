/**
 * Which of a job's calls a deletion regulation erased (docs/spec.md §6): a call of a user whose
 * tombstone for the call's source is at or after the call's receivedAt. Delete notices are never
 * erased (they are how the deletion reaches the receiver), nor calls without a userId. Pure.
 */
import type { DeliveryItem } from '@eventrelay/config';

export interface Subject {
  readonly sourceId: string;
  readonly userId: string;
}

/** The distinct (source, user) pairs of the calls a tombstone can erase, in first-seen order. */
export function erasableSubjects(items: readonly DeliveryItem[]): Subject[] {
  const seen = new Set<string>();
  const subjects: Subject[] = [];
  for (const { sourceId, call } of items) {
    if (call.type === 'delete' || call.userId === undefined) continue;
    const key = subjectKey(sourceId, call.userId);
    if (seen.has(key)) continue;
    seen.add(key);
    subjects.push({ sourceId, userId: call.userId });
  }
  return subjects;
}

/**
 * Splits the calls into those still to send and those erased, given when each subject of
 * `erasableSubjects(items)` was erased (same order; undefined: never). A call whose receivedAt
 * cannot be read is taken as received before the erasure: a deletion errs on the side of deleting.
 */
export function siftErased(
  items: readonly DeliveryItem[],
  subjects: readonly Subject[],
  erasedAt: readonly (number | undefined)[],
): { kept: DeliveryItem[]; erased: DeliveryItem[] } {
  const tombstones = new Map<string, number>();
  subjects.forEach((s, i) => {
    const at = erasedAt[i];
    if (at !== undefined) tombstones.set(subjectKey(s.sourceId, s.userId), at);
  });
  if (tombstones.size === 0) return { kept: [...items], erased: [] };
  const kept: DeliveryItem[] = [];
  const erased: DeliveryItem[] = [];
  for (const item of items) {
    const { call } = item;
    if (call.type !== 'delete' && call.userId !== undefined) {
      const at = tombstones.get(subjectKey(item.sourceId, call.userId));
      // A user who came back after the erasure is delivered again (unless suppressed at the router).
      if (at !== undefined && !(Date.parse(call.receivedAt) > at)) {
        erased.push(item);
        continue;
      }
    }
    kept.push(item);
  }
  return { kept, erased };
}

function subjectKey(sourceId: string, userId: string): string {
  return `${sourceId}\n${userId}`;
}
