/**
 * A breaker that closes while a job is being parked for it (issue 31). The close wakes the jobs
 * parked for it by promoting them, and a job still committing its park is not delayed yet, so its
 * promote is refused; once its move lands the job must come back at once, not after its park (up
 * to 90 s). Seen in flapping at saturation as calls delivered 27 s after the receiver came back.
 * The processor runs over a real Redis for its commit; the job is a stand-in that keeps BullMQ's
 * rule that only a delayed job can be promoted, and the breaker closes inside the commit's MULTI.
 */
import { DelayedError, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { keyspace, type DeliverJob, type Destination } from '@eventrelay/config';
import { createMetricsRegistry } from '@eventrelay/runtime';
import { DeadLetterStore, DeletionReceipts, ErasureTombstones, ReplayProgressStore, RetryBacklog } from '@eventrelay/stores';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';
import { DestinationEpisodes } from '../src/adapters/destination-episodes';
import { DestinationGate } from '../src/destination-gate';
import { MIN_ATTEMPTS } from '../src/domain/breaker';
import { createDeliverProcessor } from '../src/jobs/deliver';
import { createDeliveryMetrics } from '../src/metrics';

const T0 = Date.parse('2026-11-29T12:00:00.000Z');
const DESTINATION: Destination = {
  id: 'd',
  name: 'Webhooks',
  enabled: true,
  sourceIds: ['s'],
  settings: { webhooks: [{ url: 'http://127.0.0.1:9/in' }] },
};

/** A job as the processor sees it, whose moves are recorded; promote is refused unless it is delayed. */
function standInJob(prefix: string, data: DeliverJob) {
  const moves: string[] = [];
  let state: 'active' | 'delayed' | 'waiting' = 'active';
  const job = {
    id: 'job-1',
    name: 'deliver',
    queueName: 'deliver',
    queueQualifiedName: `${prefix}:deliver`,
    prefix,
    data,
    timestamp: T0,
    attemptsStarted: 1,
    moveToDelayed(at: number) {
      state = 'delayed';
      moves.push(`delayed ${at - T0} ms`);
      return Promise.resolve();
    },
    promote() {
      if (state !== 'delayed') {
        moves.push(`promote refused (${state})`);
        return Promise.reject(new Error(`Job job-1 is not in the delayed state. promote`));
      }
      state = 'waiting';
      moves.push('promoted');
      return Promise.resolve();
    },
  };
  return { job: job as unknown as Job<DeliverJob>, moves, state: () => state };
}

describe('a breaker closing while a job is parked for it', () => {
  let redis: Redis;
  let prefix: string;

  beforeEach(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    prefix = uniquePrefix('breaker-race');
  });
  afterEach(async () => {
    redis.disconnect();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  it('brings the job back once its park lands, its calls due now', async () => {
    const clock = () => T0;
    const keys = keyspace(prefix, 1);
    const gate = new DestinationGate({ maxInFlight: 64, slowMs: 1000, maxParkMs: 5000, clock, random: () => 0.5 });
    // The receiver went down: enough failures open the destination's breaker.
    for (let i = 0; i < MIN_ATTEMPTS; i++) {
      void gate.send('d');
      gate.sent('d', 5, { signal: 'failed' });
    }
    expect(gate.breaker('d').state).toBe('open');

    let closeInCommit = true;
    const transaction = () => {
      const tx = redis.multi();
      const exec = tx.exec.bind(tx);
      tx.exec = async () => {
        // The receiver is back: an answer closes the breaker while this park's MULTI is on its way.
        if (closeInCommit) {
          closeInCommit = false;
          void gate.send('d');
          gate.sent('d', 5, { signal: 'ok' });
        }
        return exec();
      };
      return tx;
    };
    const logger = pino({ level: 'silent' });
    const processor = createDeliverProcessor({
      destinations: { get: (id) => (id === 'd' ? DESTINATION : undefined), refresh: () => Promise.resolve(undefined) },
      gate,
      batchesOf: () => {
        throw new Error('this job holds its calls');
      },
      tombstones: new ErasureTombstones(redis, keys),
      receipts: new DeletionReceipts(redis, prefix),
      replays: new ReplayProgressStore(redis, keys),
      deadLetters: new DeadLetterStore(redis, keys, { maxPerDestination: 1000, maxBytesPerDestination: 1 << 20 }),
      deadLetterMax: 1000,
      deadLetterMaxBytes: 1 << 20,
      events: { record: () => Promise.resolve(undefined) },
      episodes: new DestinationEpisodes(redis, keys),
      switches: { disableUrl: () => Promise.resolve(false), disableDestination: () => Promise.resolve(false) },
      maxInFlight: 64,
      rateSlots: {
        reserve: () => Promise.reject(new Error('no maxRequestsPerSecond here')),
      },
      maxSlotWaitMs: 1000,
      timeoutMs: 5000,
      retryBacklog: new RetryBacklog(redis, keys),
      retryMax: 1000,
      retryMaxBytes: 1 << 20,
      transaction,
      sender: {
        send: () => Promise.reject(new Error('nothing is sent while the breaker is open')),
      },
      record: () => undefined,
      policy: { windowMs: 4 * 3600_000, baseDelayMs: 1000, maxDelayMs: 3600_000 },
      clock,
      random: () => 0.5,
      metrics: createDeliveryMetrics(createMetricsRegistry('webhook-delivery'), gate, {
        retryHeld: () => Promise.resolve(new Map<string, number>()),
        retryHeldBytes: () => Promise.resolve(new Map<string, number>()),
        deadLetterBytes: () => Promise.resolve(new Map<string, number>()),
      }),
      stats: { countDestination: () => undefined },
      logger,
      putBack: () => Promise.reject(new Error('a call never attempted is parked through a commit')),
    });

    // A call never attempted: parking it starts its retry window, in a commit.
    const { job, moves, state } = standInJob(prefix, {
      destinationId: 'd',
      calls: [
        {
          sourceId: 's',
          call: {
            type: 'track',
            messageId: 'm-1',
            event: 'E',
            userId: 'u',
            timestamp: new Date(T0).toISOString(),
            receivedAt: new Date(T0).toISOString(),
          },
        },
      ],
    });
    await expect(processor(job, 'token')).rejects.toBeInstanceOf(DelayedError);

    expect(gate.breaker('d').state).toBe('closed');
    expect(moves[0]).toBe('promote refused (active)');
    expect(moves.slice(1)).toEqual([expect.stringMatching(/^delayed \d+ ms$/), 'promoted']);
    expect(state()).toBe('waiting');
  });
});
