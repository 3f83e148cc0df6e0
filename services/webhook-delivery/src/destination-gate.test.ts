import { DestinationGate, MAX_PARK_MS, type EntryVerdict, type GateOptions } from './destination-gate.js';

type GateVerdict = EntryVerdict;

const T0 = Date.parse('2026-11-21T09:30:00.000Z');
const almostOne = 1 - 2 ** -40;

interface Harness {
  readonly gate: DestinationGate;
  /** Moves the injected clock (and jest's fake timers with it). */
  readonly advance: (ms: number) => void;
  readonly setRandom: (value: number) => void;
}

function harness(options: Partial<Omit<GateOptions, 'clock' | 'random'>> = {}): Harness {
  let now = T0;
  let random = 0.5;
  const gate = new DestinationGate({ maxInFlight: 2, slowMs: 1000, maxParkMs: 5000, ...options, clock: () => now, random: () => random });
  return {
    gate,
    advance: (ms) => {
      now += ms;
      jest.advanceTimersByTime(ms);
    },
    setRandom: (value) => {
      random = value;
    },
  };
}

/** Follows a verdict that may be a promise, so a test can see whether it has settled yet. */
function watch(verdict: GateVerdict | Promise<GateVerdict>): { readonly settled: GateVerdict | undefined; readonly isPromise: boolean } {
  const state: { settled: GateVerdict | undefined; isPromise: boolean } = { settled: undefined, isPromise: verdict instanceof Promise };
  if (verdict instanceof Promise) void verdict.then((v) => (state.settled = v));
  else state.settled = verdict;
  return state;
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

/** A slot under the cap is granted at once, not through a promise. */
function expectGo(verdict: GateVerdict | Promise<GateVerdict>): void {
  expect(verdict).toEqual({ kind: 'go' });
}

function expectPark(verdict: GateVerdict | Promise<GateVerdict>): number {
  expect(verdict).not.toBeInstanceOf(Promise);
  const v = verdict as GateVerdict;
  if (v.kind !== 'park') throw new Error(`expected park, got ${JSON.stringify(v)}`);
  return v.delayMs;
}

beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] }));
afterEach(() => {
  jest.clearAllTimers();
  jest.useRealTimers();
});

describe('DestinationGate', () => {
  describe('under the cap', () => {
    it('lets every job go at once and counts it', () => {
      const { gate } = harness({ maxInFlight: 3 });
      expect(gate.enter('d1')).toEqual({ kind: 'go' });
      expect(gate.enter('d1')).toEqual({ kind: 'go' });
      expect(gate.enter('d1')).toEqual({ kind: 'go' });
      expect(gate.inFlight('d1')).toBe(3);
    });

    it('counts each destination on its own', () => {
      const { gate } = harness({ maxInFlight: 1 });
      expect(gate.enter('d1')).toEqual({ kind: 'go' });
      expect(gate.enter('d2')).toEqual({ kind: 'go' });
      expect(gate.inFlight('d1')).toBe(1);
      expect(gate.inFlight('d2')).toBe(1);
      expect(gate.inFlight('d3')).toBe(0);
    });

    it('frees the slot on leave', () => {
      const { gate } = harness({ maxInFlight: 1 });
      expect(gate.enter('d1')).toEqual({ kind: 'go' });
      gate.leave('d1', 50);
      expect(gate.inFlight('d1')).toBe(0);
      expect(gate.enter('d1')).toEqual({ kind: 'go' });
    });
  });

  describe('over the cap, healthy destination', () => {
    it('waits, and gets the slot when a job leaves', async () => {
      const { gate, advance } = harness();
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      const waiter = watch(gate.enter('d1'));
      expect(waiter.isPromise).toBe(true);
      advance(500);
      await flush();
      expect(waiter.settled).toBeUndefined();
      gate.leave('d1', 120);
      await flush();
      expect(waiter.settled).toEqual({ kind: 'go' });
      // the slot passed from the leaver to the waiter: still at the cap
      expect(gate.inFlight('d1')).toBe(2);
    });

    it('hands slots to waiters in arrival order, one per leave', async () => {
      const { gate } = harness();
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      const first = watch(gate.enter('d1'));
      const second = watch(gate.enter('d1'));
      gate.leave('d1', 100);
      await flush();
      expect(first.settled).toEqual({ kind: 'go' });
      expect(second.settled).toBeUndefined();
      gate.leave('d1', 100);
      await flush();
      expect(second.settled).toEqual({ kind: 'go' });
      expect(gate.inFlight('d1')).toBe(2);
    });

    it('a leave at another destination does not release a waiter', async () => {
      const { gate } = harness({ maxInFlight: 1 });
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d2'));
      const waiter = watch(gate.enter('d1'));
      gate.leave('d2', 10);
      await flush();
      expect(waiter.settled).toBeUndefined();
      expect(gate.inFlight('d2')).toBe(0);
    });
  });

  describe('over the cap, slow destination → park', () => {
    it('still waits when the last request finished just under slowMs ago', () => {
      const { gate, advance } = harness({ slowMs: 1000 });
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      advance(999);
      expect(watch(gate.enter('d1')).isPromise).toBe(true);
    });

    it('parks when no request finished for slowMs', () => {
      const { gate, advance } = harness({ slowMs: 1000 });
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      advance(1000);
      // nothing finished for 1 s: typical = slowMs, random 0.5 → 1 × 1000
      expect(expectPark(gate.enter('d1'))).toBe(1000);
      expect(gate.inFlight('d1')).toBe(2);
    });

    it('counts the quiet time from the last request that finished', () => {
      const { gate, advance } = harness({ slowMs: 1000 });
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      advance(900);
      gate.leave('d1', 900);
      expect(gate.enter('d1')).toEqual({ kind: 'go' });
      advance(900);
      // 1.8 s since the lane started, but only 0.9 s since a request finished: still healthy
      expect(watch(gate.enter('d1')).isPromise).toBe(true);
    });

    it('parks when the mean attempt duration reaches slowMs, for about one attempt', () => {
      const { gate } = harness({ slowMs: 1000, maxParkMs: 5000 });
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      gate.leave('d1', 3000);
      expect(gate.enter('d1')).toEqual({ kind: 'go' });
      // a request finished just now, yet its attempts take 3 s: slow
      expect(expectPark(gate.enter('d1'))).toBe(3000);
    });

    it('does not count a destination as slow while its mean is just under slowMs', () => {
      const { gate } = harness({ slowMs: 1000 });
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      gate.leave('d1', 999);
      expectGo(gate.enter('d1'));
      expect(watch(gate.enter('d1')).isPromise).toBe(true);
    });

    it.each([
      ['random 0 → 0.5 × typical', 0, 1500],
      ['random 0.25', 0.25, 2250],
      ['random 0.5 → 1 × typical', 0.5, 3000],
      ['random → 1 approaches 1.5 × typical', almostOne, 4500],
    ])('park delay with %s', (_label, random, delay) => {
      const { gate, setRandom } = harness({ slowMs: 1000, maxParkMs: 5000 });
      setRandom(random);
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      gate.leave('d1', 3000);
      expectGo(gate.enter('d1'));
      expect(expectPark(gate.enter('d1'))).toBe(delay);
    });

    it('keeps every park delay within [0.5, 1.5] × the typical duration, bounded by maxParkMs', () => {
      for (const meanMs of [10, 1000, 2500, 5000, 60_000]) {
        for (const random of [0, 0.1, 0.5, 0.9, almostOne]) {
          const { gate, setRandom } = harness({ slowMs: 1000, maxParkMs: 5000 });
          setRandom(random);
          expectGo(gate.enter('d1'));
          expectGo(gate.enter('d1'));
          gate.leave('d1', meanMs);
          expectGo(gate.enter('d1'));
          const verdict = gate.enter('d1');
          // a mean below slowMs is healthy: it waits instead
          if (meanMs < 1000) {
            expect(verdict).toBeInstanceOf(Promise);
            continue;
          }
          const typical = Math.min(Math.max(meanMs, 1000), 5000);
          const delay = expectPark(verdict);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(0.5 * typical));
          expect(delay).toBeLessThanOrEqual(Math.ceil(1.5 * typical));
        }
      }
    });

    it('bounds the typical duration by maxParkMs', () => {
      const { gate, setRandom } = harness({ slowMs: 1000, maxParkMs: 5000 });
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      gate.leave('d1', 60_000);
      expectGo(gate.enter('d1'));
      setRandom(0.5);
      expect(expectPark(gate.enter('d1'))).toBe(5000);
      setRandom(0);
      expect(expectPark(gate.enter('d1'))).toBe(2500);
    });

    it('follows the recent attempts: the mean moves towards new durations', () => {
      const { gate } = harness({ slowMs: 1000, maxParkMs: 10_000 });
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      gate.leave('d1', 5000); // mean 5000
      expectGo(gate.enter('d1'));
      gate.leave('d1', 10_000); // mean 0.8 × 5000 + 0.2 × 10000 = 6000
      expectGo(gate.enter('d1'));
      expect(expectPark(gate.enter('d1'))).toBe(6000);
    });
  });

  describe('a job parked before', () => {
    it('waits twice as long after an earlier park, once past what the time stuck gives', () => {
      const { gate, advance } = harness({ maxInFlight: 1, slowMs: 1000, maxParkMs: 5000 });
      expectGo(gate.enter('d1'));
      advance(1000); // at the cap, nothing finished for slowMs: slow
      // random 0.5 → jitter factor 1; the typical duration is slowMs (1000)
      expect(expectPark(gate.enter('d1', 0))).toBe(1000);
      expect(expectPark(gate.enter('d1', 1))).toBe(2000);
      // Its parks count the breaker's too: ten of them through an outage are no reason for minutes.
      expect(expectPark(gate.enter('d1', 3))).toBe(2000);
      expect(expectPark(gate.enter('d1', 50))).toBe(2000);
      expect(expectPark(gate.enter('d1', -2))).toBe(1000);
    });
  });

  describe('a destination stuck for a while', () => {
    it('parks even a new job for about as long as it has been stuck, in doubling steps', () => {
      const { gate, advance } = harness({ maxInFlight: 1, slowMs: 1000, maxParkMs: 5000 });
      expectGo(gate.enter('d1'));
      advance(1000);
      expect(expectPark(gate.enter('d1'))).toBe(1000); // stuck from here
      advance(4000);
      expect(expectPark(gate.enter('d1'))).toBe(4000);
      advance(3000); // 7 s stuck: still the 4 s step
      expect(expectPark(gate.enter('d1'))).toBe(4000);
      // a job parked more often than that gets one doubling more
      expect(expectPark(gate.enter('d1', 4))).toBe(8000);
      advance(10 * 60 * 1000);
      expect(expectPark(gate.enter('d1'))).toBe(MAX_PARK_MS);
    });

    it('starts over once an attempt comes back quickly', () => {
      const { gate, advance } = harness({ maxInFlight: 1, slowMs: 1000, maxParkMs: 5000 });
      expectGo(gate.enter('d1'));
      advance(1000);
      expectPark(gate.enter('d1'));
      advance(8000);
      expect(expectPark(gate.enter('d1'))).toBe(8000);
      gate.leave('d1', 20); // answered in 20 ms: the destination is back
      expectGo(gate.enter('d1'));
      advance(1000); // at the cap and quiet again: slow, but stuck only from now
      expect(expectPark(gate.enter('d1'))).toBe(1000);
    });

    it('keeps counting while its attempts still time out', () => {
      const { gate, advance } = harness({ maxInFlight: 1, slowMs: 1000, maxParkMs: 5000 });
      expectGo(gate.enter('d1'));
      advance(1000);
      expectPark(gate.enter('d1'));
      advance(4000);
      gate.leave('d1', 5000); // a timeout: still stuck
      expectGo(gate.enter('d1'));
      advance(6000);
      // stuck 10 s, typical attempt 5 s (the mean): one doubling step
      expect(expectPark(gate.enter('d1'))).toBe(10_000);
    });
  });

  describe('waiters', () => {
    it('are not capped while the destination keeps answering: each gets a slot in turn, none is parked', async () => {
      const { gate } = harness({ maxInFlight: 2 });
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      const waiters = Array.from({ length: 10 }, () => watch(gate.enter('d1')));
      expect(waiters.every((w) => w.isPromise)).toBe(true);
      for (let i = 0; i < 10; i++) gate.leave('d1', 10);
      await flush();
      expect(waiters.map((w) => w.settled)).toEqual(Array.from({ length: 10 }, () => ({ kind: 'go' })));
      expect(gate.inFlight('d1')).toBe(2);
    });

    it('a waiter that waited slowMs is parked, and gives up its place', async () => {
      const { gate, advance } = harness({ slowMs: 1000, maxParkMs: 5000 });
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      const waiter = watch(gate.enter('d1'));
      advance(999);
      await flush();
      expect(waiter.settled).toBeUndefined();
      advance(1);
      await flush();
      expect(waiter.settled).toEqual({ kind: 'park', delayMs: 1000 });
      // the parked waiter no longer holds a place: a leave frees a slot instead of handing it over
      gate.leave('d1', 10);
      expect(gate.inFlight('d1')).toBe(1);
    });

    it('a waiter of a destination that keeps answering is parked for about one attempt, whatever its earlier parks', async () => {
      const { gate, advance } = harness({ slowMs: 1000, maxParkMs: 5000 });
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      // Parked five times before (an outage's breaker): were it slow, 32 times one attempt.
      const waiter = watch(gate.enter('d1', 5));
      advance(500);
      expectGo(gate.send('d1'));
      gate.sent('d1', 10, { signal: 'ok' });
      advance(500);
      await flush();
      expect(waiter.settled).toEqual({ kind: 'park', delayMs: 1000 });
    });

    it('once the destination is slow, new jobs are parked at once instead of waiting', async () => {
      const { gate, advance } = harness({ maxInFlight: 1, slowMs: 1000 });
      expectGo(gate.enter('d1'));
      const first = watch(gate.enter('d1'));
      expect(first.isPromise).toBe(true);
      advance(1000);
      await flush();
      expect(first.settled?.kind).toBe('park');
      // no request finished for slowMs while at the cap: slow, so no more waiting
      expect(expectPark(gate.enter('d1'))).toBe(1000);
      gate.leave('d1', 10);
      expect(gate.enter('d1')).toEqual({ kind: 'go' });
    });

    it('serves the oldest work first: a job back from a park goes before younger ones waiting', async () => {
      const { gate } = harness({ maxInFlight: 1 });
      expectGo(gate.enter('d1'));
      const young = watch(gate.enter('d1', 0, 1, { queuedAt: T0 + 300 }));
      const middle = watch(gate.enter('d1', 0, 1, { queuedAt: T0 + 200 }));
      const old = watch(gate.enter('d1', 3, 1, { queuedAt: T0 + 100 }));
      const order: string[] = [];
      for (let i = 0; i < 3; i++) {
        gate.leave('d1', 10);
        await flush();
        for (const [name, w] of [
          ['old', old],
          ['middle', middle],
          ['young', young],
        ] as const)
          if (w.settled && !order.includes(name)) order.push(name);
      }
      expect(order).toEqual(['old', 'middle', 'young']);
    });

    it('keeps waiting what the destination admits within slowMs, and parks the rest once, until about their turn', async () => {
      const { gate, advance } = harness({ maxInFlight: 10, slowMs: 1000 });
      for (let i = 0; i < 10; i++) expectGo(gate.enter('d1'));
      const line = Array.from({ length: 30 }, (_, i) => watch(gate.enter('d1', 0, 1, { queuedAt: T0 + i })));
      // Before the line has waited a second, no rate is known: nobody is parked yet.
      advance(950);
      await flush();
      expect(line.every((w) => w.settled === undefined)).toBe(true);
      // Ten reservations end: the head of the line goes, and the line moves at 10 requests a second.
      for (let i = 0; i < 10; i++) gate.leave('d1', 10);
      advance(50);
      await flush();
      expect(line.slice(0, 10).map((w) => w.settled)).toEqual(Array.from({ length: 10 }, () => ({ kind: 'go' })));
      expect(line.slice(10, 20).map((w) => w.settled)).toEqual(Array.from({ length: 10 }, () => undefined));
      // random 0.5: each exactly at its turn, the first a second off, then one every 100 ms
      expect(line.slice(20).map((w) => w.settled)).toEqual(
        Array.from({ length: 10 }, (_, i) => ({ kind: 'park', delayMs: 1000 + 100 * i })),
      );
      // the parked gave up their places: the next leave admits the head of what waits
      gate.leave('d1', 10);
      await flush();
      expect(line[10]?.settled).toEqual({ kind: 'go' });
      expect(line[11]?.settled).toBeUndefined();
    });

    it('parks a job far down a busy line for 5 s at most: it comes back to its place should the line speed up', async () => {
      const { gate, advance } = harness({ maxInFlight: 1, slowMs: 1000 });
      expectGo(gate.enter('d1'));
      const line = Array.from({ length: 80 }, (_, i) => watch(gate.enter('d1', 0, 1, { queuedAt: T0 + i })));
      advance(950);
      gate.leave('d1', 10);
      advance(50);
      await flush();
      // one request a second: the last is 78 s off, parked for 5 s
      expect(line[79]?.settled).toEqual({ kind: 'park', delayMs: 5000 });
      expect(line[5]?.settled).toEqual({ kind: 'park', delayMs: 4000 });
    });

    it('parks a job of a moving line that waited twice slowMs all the same (older work kept going ahead of it)', async () => {
      const { gate, advance } = harness({ maxInFlight: 1, slowMs: 1000 });
      expectGo(gate.enter('d1'));
      const young = watch(gate.enter('d1', 0, 1, { queuedAt: T0 + 5000 }));
      for (let k = 0; k < 19; k++) {
        const older = watch(gate.enter('d1', 0, 1, { queuedAt: T0 - k }));
        gate.leave('d1', 10);
        await flush();
        expect(older.settled).toEqual({ kind: 'go' });
        advance(100);
        await flush();
      }
      expect(young.settled).toBeUndefined();
      advance(100);
      await flush();
      expect(young.settled).toEqual({ kind: 'park', delayMs: 1000 });
    });

    it('reads a job without a timestamp as queued now', async () => {
      const { gate } = harness({ maxInFlight: 1 });
      expectGo(gate.enter('d1'));
      const unknown = watch(gate.enter('d1', 0, 1, { queuedAt: NaN }));
      const old = watch(gate.enter('d1', 0, 1, { queuedAt: T0 - 1000 }));
      gate.leave('d1', 10);
      await flush();
      expect(old.settled).toEqual({ kind: 'go' });
      expect(unknown.settled).toBeUndefined();
    });

    it('a waiter given the slot is not parked later by its timer', async () => {
      const { gate, advance } = harness({ slowMs: 1000 });
      expectGo(gate.enter('d1'));
      expectGo(gate.enter('d1'));
      const waiter = watch(gate.enter('d1'));
      advance(300);
      gate.leave('d1', 300);
      await flush();
      expect(waiter.settled).toEqual({ kind: 'go' });
      advance(5000);
      await flush();
      expect(waiter.settled).toEqual({ kind: 'go' });
      expect(gate.inFlight('d1')).toBe(2);
    });
  });

  describe('jobs of many requests', () => {
    it("reserves a job's requests on admission: the next job goes only while fewer than the cap are reserved", () => {
      const { gate } = harness({ maxInFlight: 8 });
      expectGo(gate.enter('d1', 0, 5));
      expect(gate.inFlight('d1')).toBe(5);
      expectGo(gate.enter('d1', 0, 5));
      expect(gate.inFlight('d1')).toBe(10);
      expect(watch(gate.enter('d1', 0, 5)).isPromise).toBe(true);
    });

    it('admits waiting jobs as requests end, while the reservations stay under the cap', async () => {
      const { gate } = harness({ maxInFlight: 8 });
      expectGo(gate.enter('d1', 0, 5));
      expectGo(gate.enter('d1', 0, 5));
      const waiter = watch(gate.enter('d1', 0, 4));
      gate.leave('d1', 10, 1);
      await flush();
      expect(waiter.settled).toBeUndefined();
      gate.leave('d1', 10, 1);
      gate.leave('d1', 10, 1);
      await flush();
      expect(waiter.settled).toEqual({ kind: 'go' });
      expect(gate.inFlight('d1')).toBe(11);
    });

    it('ends reservations never sent without touching the slow detection', () => {
      const { gate, advance } = harness({ maxInFlight: 2, slowMs: 1000 });
      expectGo(gate.enter('d1', 0, 2));
      advance(500);
      gate.leave('d1', undefined, 2);
      expect(gate.inFlight('d1')).toBe(0);
      expectGo(gate.enter('d1', 0, 2));
      // No duration was observed, so the destination is not slow: a job over the cap waits.
      expect(watch(gate.enter('d1')).isPromise).toBe(true);
    });

    it('never has more than the cap of requests open: the rest wait for a place, in order', async () => {
      const { gate } = harness({ maxInFlight: 2 });
      expectGo(gate.enter('d1', 0, 4));
      expect(gate.send('d1')).toEqual({ kind: 'go' });
      expect(gate.send('d1')).toEqual({ kind: 'go' });
      const third = watch(gate.send('d1'));
      const fourth = watch(gate.send('d1'));
      expect(gate.open('d1')).toBe(2);
      gate.sent('d1', 20);
      await flush();
      expect(third.settled).toEqual({ kind: 'go' });
      expect(fourth.settled).toBeUndefined();
      expect(gate.open('d1')).toBe(2);
      gate.sent('d1', 20);
      gate.sent('d1', 20);
      await flush();
      expect(fourth.settled).toEqual({ kind: 'go' });
      gate.sent('d1', 20);
      expect(gate.open('d1')).toBe(0);
    });

    it("holds back the requests still waiting for a place once the destination's requests turn slow", async () => {
      const { gate } = harness({ maxInFlight: 2, slowMs: 1000, maxParkMs: 5000 });
      expectGo(gate.enter('d1', 0, 4));
      expect(gate.send('d1')).toEqual({ kind: 'go' });
      expect(gate.send('d1')).toEqual({ kind: 'go' });
      const third = watch(gate.send('d1'));
      const fourth = watch(gate.send('d1', 2));
      // A request timed out after 4 s: the mean is now 4 s, slow; the waiting ones are not sent.
      gate.sent('d1', 4000);
      await flush();
      expect(third.settled).toEqual({ kind: 'park', delayMs: 4000 });
      // parked twice before: 4 s doubled once (the lane was stuck for no time yet)
      expect(fourth.settled).toEqual({ kind: 'park', delayMs: 8000 });
      expect(gate.open('d1')).toBe(1);
    });

    it('a place given back unused (no duration) does not count as a request', async () => {
      const { gate } = harness({ maxInFlight: 1 });
      expectGo(gate.enter('d1', 0, 2));
      expect(gate.send('d1')).toEqual({ kind: 'go' });
      const next = watch(gate.send('d1'));
      gate.sent('d1', undefined);
      await flush();
      expect(next.settled).toEqual({ kind: 'go' });
      expect(gate.open('d1')).toBe(1);
    });
  });

  describe("places for a job's requests", () => {
    it("end the job's reservations as its requests end, and the rest when the round is over", () => {
      const { gate } = harness({ maxInFlight: 8 });
      expectGo(gate.enter('d1', 0, 5));
      const places = gate.places('d1', 0, 5);
      expect(places.take()).toBeUndefined();
      expect(places.take()).toBeUndefined();
      expect(gate.open('d1')).toBe(2);
      places.give(15, true);
      places.give(undefined, true);
      expect(gate.open('d1')).toBe(0);
      expect(gate.inFlight('d1')).toBe(3);
      places.done();
      expect(gate.inFlight('d1')).toBe(0);
      places.done();
      expect(gate.inFlight('d1')).toBe(0);
    });

    it('a request beyond the reservation takes a place but ends no reservation', () => {
      const { gate } = harness({ maxInFlight: 8 });
      expectGo(gate.enter('d1', 0, 1));
      const places = gate.places('d1', 0, 1);
      expect(places.take()).toBeUndefined();
      expect(places.take()).toBeUndefined();
      places.give(10, true);
      places.give(10, true);
      places.done();
      expect(gate.inFlight('d1')).toBe(0);
      expect(gate.open('d1')).toBe(0);
    });

    it('a request held back took no place', async () => {
      const { gate } = harness({ maxInFlight: 1, slowMs: 1000 });
      expectGo(gate.enter('d1', 0, 2));
      const places = gate.places('d1', 0, 2);
      expect(places.take()).toBeUndefined();
      const second = places.take() as Promise<number | undefined>;
      places.give(4000, true); // timed out: slow, the waiting request is held back
      await expect(second).resolves.toBe(4000);
      places.give(undefined, false);
      expect(gate.open('d1')).toBe(0);
      expect(gate.inFlight('d1')).toBe(0);
    });
  });

  describe('the breaker and the adaptive limit', () => {
    const fail503 = { signal: 'failed' as const };
    /** Opens d1's breaker with 20 answered 503s; returns what the listener saw. */
    function openBreaker(gate: DestinationGate): string[] {
      const seen: string[] = [];
      gate.onBreakerChange((id, change) => seen.push(`${id} ${change}`));
      for (let i = 0; i < 20; i++) {
        expectGo(gate.send('d1'));
        gate.sent('d1', 5, fail503);
      }
      return seen;
    }

    it('parks jobs while open: the first comes back for the probe, the others for a minute (they are woken); the probe closes it', () => {
      const { gate, advance } = harness({ maxInFlight: 64 });
      expect(openBreaker(gate)).toEqual(['d1 opened']);
      const carrier = gate.enter('d1', 0, 5);
      expect(carrier).toEqual({ kind: 'park', delayMs: 1000 + 20 + 100, breaker: true });
      // Once only, however new the outage: coming back sooner, it would only be parked again.
      const other = gate.enter('d1', 0, 5) as { delayMs: number };
      expect(other.delayMs).toBe(60_000);
      advance(1000);
      expect(gate.enter('d1', 0, 5)).toEqual({ kind: 'probe' });
      const places = gate.places('d1', 0, 1, 'probe');
      expect(places.take()).toBeUndefined();
      places.give(3, true, { signal: 'ok' });
      places.done();
      expect(gate.breaker('d1').state).toBe('closed');
      expect(gate.enter('d1', 0, 5)).toEqual({ kind: 'go' });
    });

    it('a probe that carries last attempts counts its first answer as the probe’s, once', () => {
      const { gate, advance } = harness({ maxInFlight: 64 });
      openBreaker(gate);
      void gate.enter('d1', 0, 5);
      advance(1000);
      expect(gate.enter('d1', 0, 3)).toEqual({ kind: 'probe' });
      gate.reserveLast('d1', 2);
      const places = gate.places('d1', 0, 3, 'probe');
      for (let i = 0; i < 3; i++) expect(places.take()).toBeUndefined();
      for (let i = 0; i < 3; i++) places.give(3, true, fail503);
      places.done();
      // One failed probe: the next is 2 s later, not 8 s (three failed probes would double it thrice).
      expect(gate.breaker('d1').probeAt).toBe(gate.breaker('d1').openedAt + 1000 + 2000);
      expect(gate.inFlight('d1')).toBe(0);
    });

    it('holds back requests of jobs admitted before it opened', () => {
      const { gate } = harness({ maxInFlight: 64 });
      expectGo(gate.enter('d1', 0, 3));
      const places = gate.places('d1', 0, 3);
      openBreaker(gate);
      expect(places.take()).toBeGreaterThan(0);
      places.give(undefined, false);
      places.done();
      expect(gate.open('d1')).toBe(0);
      expect(gate.inFlight('d1')).toBe(0);
    });

    it('books each job its turns at the rate sustained 429s set: parked once until its turn, which it then takes', async () => {
      const { gate, advance } = harness({ maxInFlight: 64 });
      // 15 answers 2xx, then 5 429s, every 75 ms: over 1.5 s, 25% of them 429.
      for (let i = 0; i < 20; i++) {
        if (i > 0) advance(i === 15 ? 150 : 75);
        expectGo(gate.send('d1'));
        gate.sent('d1', 1, { signal: i < 15 ? 'ok' : 'throttled' });
      }
      const cutAt = T0 + 1500;
      // 90% of the 10 a second let through: 9 a second, one every 111 ms.
      expect(gate.limits().next().value?.[1].limit.rate).toBeCloseTo(9);
      expect(gate.enter('d1', 0, 5)).toEqual({ kind: 'go' });
      // The second job's share starts 5/9 s later, within slowMs: it is held, not parked.
      expect(gate.enter('d1', 0, 5)).toEqual({ kind: 'go' });
      // The third's would start past slowMs: it is parked until then, and the fourth after it.
      expect(gate.enter('d1', 0, 5)).toEqual({ kind: 'turn', at: cutAt + 1111 });
      expect(gate.enter('d1', 0, 5)).toEqual({ kind: 'turn', at: cutAt + 1667 });
      // A job back early with its turn is parked again until it, booking nothing more.
      expect(gate.enter('d1', 0, 5, { turnAt: cutAt + 1667 })).toEqual({ kind: 'turn', at: cutAt + 1667 });
      // Requests start one turn apart.
      const places = gate.places('d1', 0, 5);
      expect(places.take()).toBeUndefined();
      const second = places.take();
      expect(second).toBeInstanceOf(Promise);
      let went = false;
      void (second as Promise<number | undefined>).then((v) => (went = v === undefined));
      advance(100);
      await flush();
      expect(went).toBe(false);
      advance(20);
      await flush();
      expect(went).toBe(true);
      // Back at its turn, the third job goes from it; a new job still queues behind the fourth.
      advance(1000);
      expect(gate.enter('d1', 0, 5, { turnAt: cutAt + 1111 })).toEqual({ kind: 'go' });
      expect(gate.enter('d1', 0, 5)).toEqual({ kind: 'turn', at: cutAt + 2222 });
      // A turn long past (the queue was slow to return the job) is booked anew: after the fifth job's.
      advance(1000);
      expect(gate.enter('d1', 0, 5, { turnAt: cutAt + 1111 })).toEqual({ kind: 'go' });
      expect(gate.enter('d1', 0, 5)).toEqual({ kind: 'turn', at: cutAt + 3333 });
    });
  });
});
