/**
 * Deletion receipts against real Redis: each notice counts once when planned, under one outcome
 * at a time (a delivered one stays delivered), only when this regulation planned it; the per-notice
 * state expires, the counts do not.
 */
import { Redis } from 'ioredis';
import { DeletionReceipts } from '../src/deletion-receipts';
import { profileKeys } from '../src/profile-keys';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

const n = (destinationId: string, messageId: string) => ({ destinationId, messageId });

describe('DeletionReceipts', () => {
  let redis: Redis;
  let prefix: string;

  beforeEach(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    prefix = uniquePrefix('receipts');
  });
  afterEach(async () => {
    await deletePrefix(SHARED_REDIS_URL, prefix);
    redis.disconnect();
  });

  it('counts each planned notice once, however often it is planned or settled', async () => {
    const receipts = new DeletionReceipts(redis, prefix);
    expect(await receipts.read('reg_1')).toEqual([]);
    const page = [n('d-b', 'del-1'), n('d-a', 'del-1'), n('d-a', 'del-2'), n('d-a', 'del-3')];
    await receipts.plan('reg_1', page);
    await receipts.plan('reg_1', page); // the page planned again by a retried regulation job
    expect(await receipts.settle('reg_1', 'delivered', [n('d-a', 'del-1'), n('d-b', 'del-1')])).toBe(2);
    expect(await receipts.settle('reg_1', 'delivered', [n('d-a', 'del-1')])).toBe(0); // a delivery job run again
    expect(await receipts.settle('reg_1', 'deadLettered', [n('d-a', 'del-2')])).toBe(1);
    expect(await receipts.settle('reg_1', 'dropped', [n('d-a', 'del-2'), n('d-a', 'del-9')])).toBe(1);
    expect(await receipts.read('reg_1')).toEqual([
      { destinationId: 'd-a', notices: 3, delivered: 1, deadLettered: 0, dropped: 1 },
      { destinationId: 'd-b', notices: 1, delivered: 1, deadLettered: 0, dropped: 0 },
    ]);
    // Another regulation's receipts are its own.
    expect(await receipts.settle('reg_2', 'delivered', [n('d-a', 'del-3')])).toBe(0);
    expect(await receipts.read('reg_2')).toEqual([]);
  });

  it('moves a dead-lettered notice to delivered when it is replayed, and never a delivered one back', async () => {
    const receipts = new DeletionReceipts(redis, prefix);
    await receipts.plan('reg_1', [n('d-a', 'del-1'), n('d-a', 'del-2')]);
    await receipts.settle('reg_1', 'deadLettered', [n('d-a', 'del-1')]);
    expect(await receipts.read('reg_1')).toEqual([{ destinationId: 'd-a', notices: 2, delivered: 0, deadLettered: 1, dropped: 0 }]);
    await receipts.settle('reg_1', 'delivered', [n('d-a', 'del-1'), n('d-a', 'del-2')]);
    await receipts.settle('reg_1', 'deadLettered', [n('d-a', 'del-2')]);
    expect(await receipts.read('reg_1')).toEqual([{ destinationId: 'd-a', notices: 2, delivered: 2, deadLettered: 0, dropped: 0 }]);
  });

  it('keeps the counts for good and each notice’s state for 30 days after its last change', async () => {
    const receipts = new DeletionReceipts(redis, prefix);
    const many = Array.from({ length: 2500 }, (_, i) => n('d-a', `del-${i}`));
    await receipts.plan('reg_1', many);
    expect(await receipts.read('reg_1')).toEqual([{ destinationId: 'd-a', notices: 2500, delivered: 0, deadLettered: 0, dropped: 0 }]);
    const keys = profileKeys(prefix);
    expect(await redis.ttl(keys.receipts('reg_1'))).toBe(-1);
    expect(await redis.ttl(keys.noticeStates('reg_1'))).toBeGreaterThan(30 * 86_400 - 60);
    expect(await redis.ttl(keys.noticeStates('reg_1'))).toBeLessThanOrEqual(30 * 86_400);
    // Once the states are gone, a late outcome changes nothing (rather than counting a new notice).
    await redis.del(keys.noticeStates('reg_1'));
    expect(await receipts.settle('reg_1', 'delivered', [n('d-a', 'del-1')])).toBe(0);
    expect((await receipts.read('reg_1'))[0]).toMatchObject({ notices: 2500, delivered: 0 });
  });
});
