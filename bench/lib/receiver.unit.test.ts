/** How a run's receiver records become delivered sets, rates, latencies and duplicate examples. */
import type { Arrival } from '@eventrelay/testkit';
import { Arrivals } from './receiver';
import { SCENARIOS } from './scenarios';
import { expectations, verify } from './verify';

const at = (over: Partial<Arrival>): Arrival => ({
  route: 'd0',
  messageId: 'm1',
  arrivalMs: 1000,
  sentAtMs: 990,
  attempt: 1,
  status: 200,
  ...over,
});

describe('Arrivals', () => {
  it('counts a call delivered once however often it arrives, and keeps its first arrival', () => {
    const a = new Arrivals(['d0', 'd1']);
    a.add(at({}));
    a.add(at({ arrivalMs: 3000, attempt: 2 }));
    a.add(at({ route: 'd1', messageId: 'm2', arrivalMs: 1500, sentAtMs: 1400 }));
    expect(a.deliveredCount()).toBe(2);
    expect(a.arrivalsBetween(0, 2000, ['d1'])).toBe(1);
    expect(a.arrivalsBetween(0, 2000)).toBe(2);
    expect([...a.latenciesOfSentBetween(0, 2000)].sort((x, y) => x - y)).toEqual([10, 100]);
    expect(a.deliveredByRoute().get('d0')?.get('m1')).toBe(2);
  });

  it('does not count non-2xx answers as deliveries, but counts them as requests by status', () => {
    const a = new Arrivals(['d0']);
    a.add(at({ status: 500 }));
    a.add(at({ status: 0 }));
    expect(a.deliveredCount()).toBe(0);
    expect(a.requests).toBe(2);
    expect(a.statuses).toEqual({ '0': 1, '500': 1 });
  });

  it("ignores other routes' traffic (a baseline's, an earlier run's)", () => {
    const a = new Arrivals(['d0']);
    a.add(at({ route: 'chain' }));
    expect(a.requests).toBe(0);
  });

  it('keeps every attempt to a watched route, in order, and none of the others', () => {
    const a = new Arrivals(['d0', 'd1'], ['d0']);
    a.add(at({ status: 429, arrivalMs: 900 }));
    a.add(at({ status: 200, arrivalMs: 1900, attempt: 2 }));
    a.add(at({ route: 'd1', status: 500 }));
    expect(a.attemptsOf('d0')).toEqual([
      { arrivalMs: 900, status: 429 },
      { arrivalMs: 1900, status: 200 },
    ]);
    expect(a.attemptsOf('d1')).toEqual([]);
    expect(a.requests).toBe(3);
  });

  it('gives each duplicate with the attempt and arrival of every 2xx answer', () => {
    const a = new Arrivals(['d0']);
    a.add(at({ messageId: 'a' }));
    a.add(at({ messageId: 'b', attempt: 1, arrivalMs: 1100 }));
    a.add(at({ messageId: 'b', attempt: 2, arrivalMs: 7000 }));
    expect(a.duplicateExamples).toEqual([
      {
        route: 'd0',
        messageId: 'b',
        answers: [
          { attempt: 1, arrivalMs: 1100 },
          { attempt: 2, arrivalMs: 7000 },
        ],
      },
    ]);
    expect(a.attemptsToDeliver()).toEqual({ '1': 2 });
  });
});

describe('expectations', () => {
  const hostile = SCENARIOS.find((s) => s.name === 'hostile');
  if (!hostile) throw new Error('the hostile scenario is missing');
  const deliveredAll = (ids: string[]) => new Map(ids.map((id) => [id, 1]));

  it('holds when the dead-by-design destinations are all dead letters and the others all delivered', () => {
    const v = verify({
      acknowledged: new Map([
        ['d0', ['x']],
        ['d3', ['y']],
      ]),
      delivered: new Map([['d3', deliveredAll(['y'])]]),
      deadLettered: new Map([['d0', new Set(['x'])]]),
    });
    expect(expectations(hostile, v, { tlsRequests: 0, badSignatures: 0, unsigned: 0 })).toEqual([]);
  });

  it('names a destination whose calls should all be dead letters but were delivered, and a request that reached TLS', () => {
    const v = verify({
      acknowledged: new Map([['d1', ['x']]]),
      delivered: new Map([['d1', deliveredAll(['x'])]]),
      deadLettered: new Map(),
    });
    expect(expectations(hostile, v, { tlsRequests: 2, badSignatures: 1, unsigned: 0 })).toEqual([
      'd1: 0 of 1 dead-lettered, all expected',
      '2 requests reached the self-signed https receiver',
      '1 requests with a bad signature',
    ]);
  });
});
