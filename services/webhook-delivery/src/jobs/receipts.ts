/**
 * Records what became of the delete notices a job held in their regulations' deletion receipts
 * (docs/spec.md §6). Called before the job's commit: if the commit then fails, the job runs again
 * and records again, which the receipts take as the same outcome (or a later one) of the same
 * notice, never as a second notice.
 */
import type { DeliveryItem } from '@eventrelay/config';
import type { DeletionReceipts, NoticeOutcome } from '@eventrelay/stores';
import { noticesByRegulation } from '../domain/receipts.js';

export type Receipts = Pick<DeletionReceipts, 'settle'>;

export async function recordNoticeOutcomes(
  receipts: Receipts,
  destinationId: string,
  outcomes: Partial<Record<NoticeOutcome, readonly DeliveryItem[]>>,
): Promise<void> {
  for (const [outcome, items] of Object.entries(outcomes) as [NoticeOutcome, readonly DeliveryItem[]][])
    for (const [regulationId, messageIds] of noticesByRegulation(items))
      await receipts.settle(
        regulationId,
        outcome,
        messageIds.map((messageId) => ({ destinationId, messageId })),
      );
}
