import type { DeliveryItem } from '@eventrelay/config';
import { noticesByRegulation } from './receipts.js';

const notice = (messageId: string, regulationId?: string): DeliveryItem => ({
  sourceId: 'src-1',
  call: { type: 'delete', messageId, userId: 'u-1', timestamp: '2026-11-21T10:00:00.000Z', ...(regulationId ? { regulationId } : {}) },
});
const track = (messageId: string): DeliveryItem => ({
  sourceId: 'src-1',
  call: { type: 'track', messageId, userId: 'u-1', event: 'E', timestamp: 't', receivedAt: 't' },
});

describe('noticesByRegulation', () => {
  it('groups the delete notices by their regulation, in order, leaving out other calls and notices that name none', () => {
    const found = noticesByRegulation([
      notice('del-a-1', 'reg_a'),
      track('t-1'),
      notice('del-b-1', 'reg_b'),
      notice('del-old'),
      notice('del-a-2', 'reg_a'),
    ]);
    expect([...found]).toEqual([
      ['reg_a', ['del-a-1', 'del-a-2']],
      ['reg_b', ['del-b-1']],
    ]);
  });

  it('is empty for a job of ordinary calls', () => {
    expect(noticesByRegulation([track('t-1'), track('t-2')]).size).toBe(0);
  });
});
