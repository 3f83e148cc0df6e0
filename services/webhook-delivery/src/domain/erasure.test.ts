import type { DeliveryItem } from '@eventrelay/config';
import { erasableSubjects, siftErased } from './erasure.js';

const ERASED_AT = Date.parse('2026-11-21T09:30:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const call = (messageId: string, sourceId: string, userId: string | undefined, receivedAt: number | string): DeliveryItem => ({
  sourceId,
  call: {
    type: 'track',
    messageId,
    ...(userId === undefined ? { anonymousId: 'anon' } : { userId }),
    event: 'E',
    timestamp: iso(ERASED_AT),
    receivedAt: typeof receivedAt === 'string' ? receivedAt : iso(receivedAt),
  },
});
const notice = (messageId: string, sourceId: string, userId: string): DeliveryItem => ({
  sourceId,
  call: { type: 'delete', messageId, userId, timestamp: iso(ERASED_AT - 60_000) },
});
const ids = (items: readonly DeliveryItem[]) => items.map((i) => i.call.messageId);

describe('erasableSubjects', () => {
  it('names each (source, user) of the calls once, in first-seen order, leaving out delete notices and calls without a userId', () => {
    const items = [
      call('a', 'src-1', 'u-1', ERASED_AT),
      call('b', 'src-2', 'u-1', ERASED_AT),
      call('c', 'src-1', 'u-1', ERASED_AT),
      notice('n', 'src-1', 'u-9'),
      call('anon', 'src-1', undefined, ERASED_AT),
      call('d', 'src-1', 'u-2', ERASED_AT),
    ];
    expect(erasableSubjects(items)).toEqual([
      { sourceId: 'src-1', userId: 'u-1' },
      { sourceId: 'src-2', userId: 'u-1' },
      { sourceId: 'src-1', userId: 'u-2' },
    ]);
    expect(erasableSubjects([notice('n', 'src-1', 'u-9')])).toEqual([]);
  });
});

describe('siftErased', () => {
  it('erases the calls of a tombstoned (source, user) received at or before the erasure, keeps later ones, other sources and other users', () => {
    const items = [
      call('before', 'src-1', 'u-1', ERASED_AT - 1),
      call('same-ms', 'src-1', 'u-1', ERASED_AT),
      call('after', 'src-1', 'u-1', ERASED_AT + 1),
      call('other-source', 'src-2', 'u-1', ERASED_AT - 1),
      call('other-user', 'src-1', 'u-2', ERASED_AT - 1),
      call('anonymous', 'src-1', undefined, ERASED_AT - 1),
    ];
    const subjects = erasableSubjects(items);
    const erasedAt = subjects.map((s) => (s.sourceId === 'src-1' && s.userId === 'u-1' ? ERASED_AT : undefined));
    const { kept, erased } = siftErased(items, subjects, erasedAt);
    expect(ids(erased)).toEqual(['before', 'same-ms']);
    expect(ids(kept)).toEqual(['after', 'other-source', 'other-user', 'anonymous']);
  });

  it('never erases a delete notice, whatever its user’s tombstone says', () => {
    const items = [notice('del-1', 'src-1', 'u-1'), call('t', 'src-1', 'u-1', ERASED_AT - 5)];
    const { kept, erased } = siftErased(items, [{ sourceId: 'src-1', userId: 'u-1' }], [ERASED_AT]);
    expect(ids(kept)).toEqual(['del-1']);
    expect(ids(erased)).toEqual(['t']);
  });

  it('takes a call whose receivedAt cannot be read as received before the erasure', () => {
    const items = [call('garbled', 'src-1', 'u-1', 'not a time'), call('fine', 'src-1', 'u-1', ERASED_AT + 10)];
    const { kept, erased } = siftErased(items, [{ sourceId: 'src-1', userId: 'u-1' }], [ERASED_AT]);
    expect(ids(erased)).toEqual(['garbled']);
    expect(ids(kept)).toEqual(['fine']);
  });

  it('keeps everything, in order, when no subject has a tombstone', () => {
    const items = [call('a', 'src-1', 'u-1', ERASED_AT - 1), notice('n', 'src-1', 'u-1'), call('b', 'src-1', 'u-2', 0)];
    const { kept, erased } = siftErased(items, erasableSubjects(items), [undefined, undefined]);
    expect(ids(kept)).toEqual(['a', 'n', 'b']);
    expect(erased).toEqual([]);
  });
});
