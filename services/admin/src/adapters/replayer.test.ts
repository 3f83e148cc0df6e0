/**
 * The Replayer's walk through the dead letters for a replay by filter, against a store that
 * evicts its oldest letters between reads (a destination at its cap, still failing): every letter
 * that matches is replayed once, none is skipped.
 */
import type { DeadLetter, DeliverJob } from '@eventrelay/config';
import { Replayer } from './replayer';

function letter(i: number, event: string): DeadLetter {
  const at = new Date(Date.UTC(2026, 10, 25, 9, 0, 0, 0) + Math.floor(i / 3)).toISOString(); // three letters per millisecond
  return {
    jobId: `dst-letter-${i}`,
    job: {
      sourceId: 'src',
      destinationId: 'dst',
      call: { type: 'track', messageId: `m-${i}`, userId: 'u', event, timestamp: at, receivedAt: at },
    },
    attempts: 1,
    lastError: 'HTTP 400',
    urls: [],
    firstAttemptAt: at,
    deadAt: at,
  };
}

/** Letters by deadAt then jobId, as the sorted-set index orders them; evicts the oldest after each read. */
function evictingStore(letters: DeadLetter[], evictPerRead: number) {
  const index = [...letters].sort((a, b) => Date.parse(a.deadAt) - Date.parse(b.deadAt) || (a.jobId < b.jobId ? -1 : 1));
  const evicted: DeadLetter[] = [];
  return {
    index,
    evicted,
    oldest: (_d: string, o: { limit: number; sinceMs?: number; untilMs?: number; offset?: number }) => {
      const inRange = index.filter(
        (l) => Date.parse(l.deadAt) >= (o.sinceMs ?? -Infinity) && Date.parse(l.deadAt) <= (o.untilMs ?? Infinity),
      );
      const page = inRange.slice(o.offset ?? 0, (o.offset ?? 0) + o.limit);
      evicted.push(...index.splice(0, evictPerRead));
      return Promise.resolve(page);
    },
    byMessageIds: () => Promise.resolve([]),
    remove: (_d: string, removed: readonly DeadLetter[]) => {
      let n = 0;
      for (const l of removed) {
        const at = index.indexOf(l);
        if (at < 0) continue;
        index.splice(at, 1);
        n++;
      }
      return Promise.resolve(n);
    },
  };
}

describe('Replayer, replay by filter', () => {
  it('replays every matching letter while the oldest are evicted between reads', async () => {
    // 1,200 letters, every other one matching; the first 100 (50 matching) are evicted before the walk reaches them.
    const letters = Array.from({ length: 1200 }, (_, i) => letter(i, i % 2 === 0 ? 'Order Completed' : 'Signed Up'));
    const store = evictingStore(letters, 100);
    const queued: string[] = [];
    const replayer = new Replayer(
      store,
      { begin: () => Promise.resolve(), plan: () => Promise.resolve(0) },
      () =>
        ({
          addBulk: (jobs: { data: DeliverJob }[]) => (queued.push(...jobs.map((j) => JSON.stringify(j.data))), Promise.resolve([])),
        }) as never,
      () => Date.UTC(2026, 10, 26),
    );
    const result = await replayer.replay('dst', { kind: 'filter', filter: { q: 'order' } }, 'rpl_1');
    const matches = (l: DeadLetter) => (l.job.call as { event?: string }).event === 'Order Completed';
    const queuedIds = queued.map((q) => (JSON.parse(q) as { calls: { call: { messageId: string } }[] }).calls[0]!.call.messageId);
    // No matching letter is left behind, each was queued once (or evicted by the cap before the
    // walk got to it), and nothing else was queued.
    expect(store.index.filter(matches)).toEqual([]);
    expect(new Set(queuedIds).size).toBe(queuedIds.length);
    for (const l of letters.filter(matches)) expect(queuedIds.includes(l.job.call.messageId) || store.evicted.includes(l)).toBe(true);
    expect(letters.filter((l) => !matches(l)).some((l) => queuedIds.includes(l.job.call.messageId))).toBe(false);
    expect(result.replayed).toBeGreaterThan(0);
    expect(store.evicted.length).toBeGreaterThan(0);
  });
});
