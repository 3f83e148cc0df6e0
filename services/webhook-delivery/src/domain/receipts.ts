/**
 * The delete notices among a job's calls, for their regulations' deletion receipts (docs/spec.md
 * §6). Pure.
 */
import type { DeliveryItem } from '@eventrelay/config';

/**
 * The messageIds of the delete notices, by the regulation that sent them, in order. A notice that
 * names no regulation (queued before receipts existed) has no receipt to update and is left out.
 */
export function noticesByRegulation(items: readonly DeliveryItem[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const { call } of items) {
    if (call.type !== 'delete' || call.regulationId === undefined) continue;
    const messageIds = found.get(call.regulationId);
    if (messageIds) messageIds.push(call.messageId);
    else found.set(call.regulationId, [call.messageId]);
  }
  return found;
}
