import { batchDeliveryJobId, callDeliveryId } from './delivery-ids.js';

describe('callDeliveryId', () => {
  it('is the same for the same inputs', () => {
    expect(callDeliveryId('dest-1', 'src-1', 'msg-1')).toBe(callDeliveryId('dest-1', 'src-1', 'msg-1'));
  });

  it('starts with the destination id, so a destination’s jobs are easy to find', () => {
    expect(callDeliveryId('dest-1', 'src-1', 'msg-1')).toMatch(/^dest-1-[A-Za-z0-9_-]{22}$/);
  });

  it('differs when the destination, the source or the messageId differs', () => {
    const base = callDeliveryId('dest-1', 'src-1', 'msg-1');
    expect(callDeliveryId('dest-2', 'src-1', 'msg-1')).not.toBe(base);
    expect(callDeliveryId('dest-1', 'src-2', 'msg-1')).not.toBe(base);
    expect(callDeliveryId('dest-1', 'src-1', 'msg-2')).not.toBe(base);
    expect(callDeliveryId('dest-1', 'src-1', 'MSG-1')).not.toBe(base);
  });

  it('does not confuse where the source ends and the messageId begins', () => {
    expect(callDeliveryId('d', 'src-1', 'a-msg')).not.toBe(callDeliveryId('d', 'src-1-a', 'msg'));
    expect(callDeliveryId('d', 'ab', 'c')).not.toBe(callDeliveryId('d', 'a', 'bc'));
  });

  it('gives distinct ids to many messageIds', () => {
    const ids = new Set(Array.from({ length: 10_000 }, (_, i) => callDeliveryId('d', 's', `m-${i}`)));
    expect(ids.size).toBe(10_000);
  });

  it.each([
    ['with ":"', 'urn:msg:1:2'],
    ['with "/"', 'a/b/../c'],
    ['with unicode', 'nachricht-ü-🎉-消息'],
    ['of 100 characters', 'x'.repeat(100)],
    ['of 100 characters with ":" and "/"', ':/'.repeat(50)],
    ['with spaces and newlines', 'a b\nc'],
    ['empty', ''],
  ])('is short and has no ":" for a messageId %s', (_label, messageId) => {
    const id = callDeliveryId('dest_1', 'src-1', messageId);
    expect(id).not.toContain(':');
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(id.length).toBeLessThanOrEqual('dest_1'.length + 1 + 22);
  });

  it('has no ":" for any destination and source id the config schema allows', () => {
    for (const [dest, src] of [
      ['a', 'b'],
      ['D-E_F', 's_1-2'],
      ['x'.repeat(64), 'y'.repeat(64)],
    ] as const) {
      expect(callDeliveryId(dest, src, 'urn:m:1')).not.toContain(':');
    }
  });
});

describe('batchDeliveryJobId', () => {
  it('names the destination and the batch, and differs from every callDeliveryId', () => {
    expect(batchDeliveryJobId('dest-1', 'b7Qx_9')).toBe('dest-1-b-b7Qx_9');
    expect(batchDeliveryJobId('dest-1', 'x'.repeat(22))).not.toBe(callDeliveryId('dest-1', 'src', 'm'));
    expect(batchDeliveryJobId('dest-1', 'x'.repeat(22))).not.toMatch(/^dest-1-[A-Za-z0-9_-]{22}$/);
  });
});
