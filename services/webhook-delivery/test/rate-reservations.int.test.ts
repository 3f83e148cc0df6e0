/**
 * The maxRequestsPerSecond slots in Redis (adapters/rate-reservations.ts): taken one slot apart
 * across every caller, refused past the longest wait accepted, and from a turn on when the job
 * has one (issue 31: a job parked for its turn comes back holding its slots). Slots of 100 s
 * keep the figures exact whatever the few milliseconds between two calls.
 */
import { Redis } from 'ioredis';
import { keyspace } from '@eventrelay/config';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';
import { RateReservations } from '../src/adapters/rate-reservations';

const PER_SECOND = 0.01;
const SLOT_MS = 100_000;

describe('RateReservations', () => {
  let redis: Redis;
  let prefix: string;
  let slots: RateReservations;

  beforeEach(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    prefix = uniquePrefix('rate-slots');
    slots = new RateReservations(redis, keyspace(prefix, 1));
  });
  afterEach(async () => {
    redis.disconnect();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  /** A wait, to the nearest slot: what elapsed between two calls is far below one. */
  const slotsAway = (ms: number) => Math.round(ms / SLOT_MS);

  it('takes slots one apart after those taken before, and takes nothing past the longest wait accepted', async () => {
    const first = await slots.reserve('d1', PER_SECOND, 3, SLOT_MS);
    expect(first).toEqual({ granted: true, waitMs: 0 });
    const second = await slots.reserve('d1', PER_SECOND, 2, 10 * SLOT_MS);
    expect([second.granted, slotsAway(second.waitMs)]).toEqual([true, 3]);
    const refused = await slots.reserve('d1', PER_SECOND, 1, SLOT_MS);
    expect([refused.granted, slotsAway(refused.waitMs)]).toEqual([false, 5]);
    // Nothing was taken by the refusal: the next caller's first slot is still the sixth.
    const third = await slots.reserve('d1', PER_SECOND, 1, 10 * SLOT_MS);
    expect([third.granted, slotsAway(third.waitMs)]).toEqual([true, 5]);
    // Another destination has slots of its own.
    expect(await slots.reserve('d2', PER_SECOND, 1, SLOT_MS)).toEqual({ granted: true, waitMs: 0 });
  });

  it('takes them from a turn on: no sooner than asked, and never before those taken already', async () => {
    const later = await slots.reserve('d1', PER_SECOND, 1, 10 * SLOT_MS, 4 * SLOT_MS);
    expect([later.granted, slotsAway(later.waitMs)]).toEqual([true, 4]);
    // Slots start after the latest taken, even for a caller whose turn is sooner.
    const sooner = await slots.reserve('d1', PER_SECOND, 1, 10 * SLOT_MS, SLOT_MS);
    expect([sooner.granted, slotsAway(sooner.waitMs)]).toEqual([true, 5]);
  });
});
