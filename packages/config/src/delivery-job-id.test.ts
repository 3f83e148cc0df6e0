import { deliveryJobId } from './delivery-job-id.js';

describe('deliveryJobId', () => {
  it('is the same for the same inputs', () => {
    expect(deliveryJobId('dest-1', 'src-1', 'msg-1')).toBe(deliveryJobId('dest-1', 'src-1', 'msg-1'));
  });

  it('starts with the destination id, so a destination’s jobs are easy to find', () => {
    expect(deliveryJobId('dest-1', 'src-1', 'msg-1')).toMatch(/^dest-1-[A-Za-z0-9_-]{22}$/);
  });

  it('differs when the destination, the source or the messageId differs', () => {
    const base = deliveryJobId('dest-1', 'src-1', 'msg-1');
    expect(deliveryJobId('dest-2', 'src-1', 'msg-1')).not.toBe(base);
    expect(deliveryJobId('dest-1', 'src-2', 'msg-1')).not.toBe(base);
    expect(deliveryJobId('dest-1', 'src-1', 'msg-2')).not.toBe(base);
    expect(deliveryJobId('dest-1', 'src-1', 'MSG-1')).not.toBe(base);
  });

  it('does not confuse where the source ends and the messageId begins', () => {
    expect(deliveryJobId('d', 'src-1', 'a-msg')).not.toBe(deliveryJobId('d', 'src-1-a', 'msg'));
    expect(deliveryJobId('d', 'ab', 'c')).not.toBe(deliveryJobId('d', 'a', 'bc'));
  });

  it('gives distinct ids to many messageIds', () => {
    const ids = new Set(Array.from({ length: 10_000 }, (_, i) => deliveryJobId('d', 's', `m-${i}`)));
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
    const id = deliveryJobId('dest_1', 'src-1', messageId);
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
      expect(deliveryJobId(dest, src, 'urn:m:1')).not.toContain(':');
    }
  });
});
