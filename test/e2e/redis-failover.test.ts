/**
 * Redis failover against real processes: a primary, its replica and a Sentinel of the test's own;
 * every compiled service finds the primary through the Sentinel (REDIS_SENTINELS). The primary is
 * SIGKILLed under load, the Sentinel promotes the replica, and the pipeline carries on without any
 * eventrelay process being restarted. In durable mode (INGEST_DURABLE_REPLICAS=1) every call the
 * intake answered 200 is delivered; the old primary, started again, becomes the new replica.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  buildServices,
  eventually,
  sleep,
  startReceiver,
  startReplicatedRedis,
  startStack,
  uniquePrefix,
  type Receiver,
  type ReplicatedRedis,
} from '@eventrelay/testkit';
import { explainWith, startBatchLoad } from '../support/failover-load';

const SECRET = 'redis-failover-secret';
const WRITE_KEY = 'wk_redis_failover_0001';

let dir: string;
let receiver: Receiver;
let configFile: string;
let redis: ReplicatedRedis;

beforeAll(async () => {
  buildServices();
  dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-failover-'));
  receiver = await startReceiver({ secret: SECRET });
  configFile = path.join(dir, 'eventrelay.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      sources: [{ id: 'src-failover', name: 'Failover', type: 'server', writeKey: WRITE_KEY }],
      destinations: [
        {
          id: 'dst-failover',
          name: 'Webhooks',
          enabled: true,
          sourceIds: ['src-failover'],
          settings: { webhooks: [{ url: receiver.url }], sharedSecret: SECRET },
        },
      ],
      audiences: [],
    }),
  );
  redis = await startReplicatedRedis({ sentinel: true, aof: 'everysec', downAfterMs: 1000 });
}, 240_000);

afterAll(async () => {
  await redis?.close();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('follows a Sentinel failover on its own and, in durable mode, delivers every call it answered 200', async () => {
  const sentinel = redis.sentinel!;
  const stack = await startStack({
    redisUrl: redis.primary.url,
    prefix: uniquePrefix('failover'),
    configFile,
    env: {
      REDIS_SENTINELS: sentinel.address,
      REDIS_SENTINEL_NAME: redis.name,
      INGEST_DURABLE_REPLICAS: '1',
      INGEST_DURABLE_TIMEOUT_MS: '500',
    },
  });
  try {
    const pids = stack.processes().map((p) => p.pid);
    // On a failure, what the processes said last is the only clue to where they got stuck.
    const tellWhy = explainWith(() => stack.processes(), 4000);
    const load = startBatchLoad(stack.url('ingest'), { writeKeyOf: () => WRITE_KEY, messageIdPrefix: 'fo', pauseMs: 20 });
    const { acknowledged, answers } = load;

    await sleep(2000);
    const before = await sentinel.primaryPort();
    expect(before).toBe(redis.primary.port);
    load.markKill();
    await redis.primary.stop();
    // The Sentinel names the replica as the primary once it has given up on the old one.
    await eventually(async () => expect(await sentinel.primaryPort()).toBe(redis.replica.port), 30_000);
    // The old primary comes back as the new primary's replica, so durable writes can be confirmed again.
    await redis.primary.start();
    await eventually(() => expect(load.servedAfterKill()).toBeGreaterThan(20), 60_000).catch(tellWhy);
    await load.stop();

    const missing = () => {
      const delivered = new Set(receiver.requests.map((r) => String(r.headers['x-eventrelay-message-id'])));
      return [...acknowledged].filter((id) => !delivered.has(id));
    };
    await eventually(() => expect(missing()).toEqual([]), 60_000).catch(tellWhy);
    console.info(`failover: ${acknowledged.size} calls answered 200, all delivered; answers by status ${JSON.stringify(answers)}`);
    expect(receiver.badSignatures()).toEqual([]);
    // Nobody restarted anything: the same processes ran throughout.
    expect(stack.processes().map((p) => p.pid)).toEqual(pids);
    expect(stack.processes().every((p) => p.running())).toBe(true);
  } finally {
    await stack.stop();
  }
}, 240_000);
