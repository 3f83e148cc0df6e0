/** The record store: slices as parallel JSON-safe arrays, growth past its first capacity, interned routes. */
import { RecordStore, type RequestRecord } from './records';

const record = (i: number, over: Partial<RequestRecord> = {}): RequestRecord => ({
  arrivalMs: 1_700_000_000_000 + i + 0.25,
  route: `d${i % 3}`,
  messageId: `m-${i}`,
  attempt: (i % 4) + 1,
  sentAtMs: 1_700_000_000_000 + i,
  status: 200,
  signature: 'ok',
  tls: false,
  ...over,
});

describe('RecordStore', () => {
  it('returns the records of a window as parallel arrays, every field intact', () => {
    const store = new RecordStore();
    store.add(record(0));
    store.add(record(1, { status: 0, signature: 'bad', tls: true, sentAtMs: NaN, messageId: '', attempt: 0 }));
    store.add(record(2, { status: 429, signature: 'unsigned' }));
    store.add(record(3, { status: 302, signature: 'none' }));
    expect(store.slice(1, 2)).toEqual({
      from: 1,
      arrivalMs: [1_700_000_000_001.25, 1_700_000_000_002.25],
      route: ['d1', 'd2'],
      messageId: ['', 'm-2'],
      attempt: [0, 3],
      sentAtMs: [null, 1_700_000_000_002],
      status: [0, 429],
      signature: ['bad', 'unsigned'],
      tls: [true, false],
    });
    expect(store.slice(3, 10).signature).toEqual(['none']);
  });

  it('survives JSON (as IPC sends it) unchanged', () => {
    const store = new RecordStore();
    store.add(record(0, { sentAtMs: NaN }));
    const slice = store.slice(0, 1);
    expect(JSON.parse(JSON.stringify(slice))).toEqual(slice);
  });

  it('clips windows to what exists', () => {
    const store = new RecordStore();
    for (let i = 0; i < 5; i++) store.add(record(i));
    expect(store.slice(3, 100).messageId).toEqual(['m-3', 'm-4']);
    expect(store.slice(5, 10).messageId).toEqual([]);
    expect(store.slice(9, 10)).toMatchObject({ from: 5, status: [] });
    expect(store.slice(-2, 1).messageId).toEqual(['m-0']);
  });

  it('grows past its first capacity without losing or reordering records', () => {
    const store = new RecordStore();
    const n = 40_000;
    for (let i = 0; i < n; i++) store.add(record(i, { status: 200 + (i % 7) }));
    expect(store.length).toBe(n);
    const all = store.slice(0, n);
    expect(all.messageId[0]).toBe('m-0');
    expect(all.messageId[n - 1]).toBe(`m-${n - 1}`);
    expect(all.status[n - 1]).toBe(200 + ((n - 1) % 7));
    expect(all.sentAtMs[20_000]).toBe(1_700_000_000_000 + 20_000);
    expect(new Set(all.route)).toEqual(new Set(['d0', 'd1', 'd2']));
  });
});
