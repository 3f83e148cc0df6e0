/**
 * A Redis Cluster primary SIGKILLed under load, against the compiled services on a real cluster of
 * the test's own (6 shards over 3 primaries). Redis Cluster promotes the primary's replica; the
 * pipeline carries on without any eventrelay process being restarted. Replication is asynchronous,
 * so without durable mode a call answered 200 in the last moment before the kill may be lost: the
 * test reports how many (docs/deployment.md, "Redis Cluster"). In durable mode (a WAIT for a
 * replica on the shard's node before the 200) none is. The durable run gives each primary two
 * replicas, so the promoted one still has a replica to confirm writes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { keySlot, keyspace } from '@eventrelay/config';
import { buildServices, eventually, sleep, startReceiver, startRedisCluster, startStack, type Receiver } from '@eventrelay/testkit';
import { explainWith, startBatchLoad } from '../support/failover-load';

const SECRET = 'cluster-failover-secret';
const PREFIX = '{er-failover}';
const SHARDS = 6;
const SOURCES = ['src-a', 'src-b', 'src-c', 'src-d', 'src-e', 'src-f'];
const DESTINATIONS = ['dst-1', 'dst-2', 'dst-3'];
const writeKey = (sourceId: string) => `wk_failover_${sourceId.replace('-', '_')}_0001`;

let dir: string;
let receiver: Receiver;
let configFile: string;

beforeAll(async () => {
  buildServices();
  dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-cluster-failover-'));
  receiver = await startReceiver({ secret: SECRET });
  const base = receiver.url.replace(/\/hook$/, '');
  configFile = path.join(dir, 'eventrelay.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      sources: SOURCES.map((id) => ({ id, name: id, type: 'server', writeKey: writeKey(id) })),
      destinations: DESTINATIONS.map((id) => ({
        id,
        name: 'Webhooks',
        enabled: true,
        sourceIds: SOURCES,
        settings: { webhooks: [{ url: `${base}/${id}` }], sharedSecret: SECRET },
      })),
      audiences: [],
    }),
  );
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Outcome {
  readonly acknowledged: number;
  readonly lost: string[];
  readonly answers: Record<number, number>;
  readonly servedAfterKill: number;
}

/** Sends batches round the sources, kills the primary of shard 0 after 2 s, and counts what became of every call answered 200. */
async function failOverUnderLoad(run: string, replicasPerPrimary: number, env: Record<string, string>): Promise<Outcome> {
  const cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary });
  const prefix = PREFIX.replace('}', `-${run}}`);
  const stack = await startStack({
    redisUrl: 'redis://127.0.0.1:6379',
    prefix,
    configFile,
    env: { REDIS_CLUSTER_NODES: cluster.seeds, EVENTRELAY_SHARDS: String(SHARDS), ...env },
  });
  const tellWhy = explainWith(() => stack.processes(), 3000);
  try {
    const pids = stack.processes().map((p) => p.pid);
    const load = startBatchLoad(stack.url('ingest'), {
      writeKeyOf: (n) => writeKey(SOURCES[n % SOURCES.length]!),
      messageIdPrefix: run,
      pauseMs: 10,
    });
    const { acknowledged, answers } = load;

    await sleep(2000);
    const victim = await cluster.primaryOfSlot(keySlot(`${keyspace(prefix, SHARDS).prefixes[0]}:route:wait`));
    load.markKill();
    await cluster.kill(victim.port);
    await cluster.waitHealthy(30_000);
    expect((await cluster.primaryOfSlot(keySlot(`${keyspace(prefix, SHARDS).prefixes[0]}:route:wait`))).port).not.toBe(victim.port);
    // Served again, on every shard: each source's calls were answered 200 after the failover.
    await eventually(() => expect(load.servedAfterKill()).toBeGreaterThan(60), 60_000).catch(tellWhy);
    await load.stop();

    const missing = () => {
      const lost: string[] = [];
      for (const d of DESTINATIONS) {
        const delivered = new Set(
          receiver.requests.filter((r) => r.path === `/${d}`).map((r) => String(r.headers['x-eventrelay-message-id'])),
        );
        for (const id of acknowledged) if (!delivered.has(id)) lost.push(`${d}:${id}`);
      }
      return lost;
    };
    // What is still missing once nothing has changed for 5 s is lost.
    let lost = missing();
    await eventually(
      async () => {
        const before = lost.length;
        await sleep(5000);
        lost = missing();
        expect(lost.length).toBe(before);
      },
      90_000,
      0,
    );
    expect(receiver.badSignatures()).toEqual([]);
    // Nobody restarted anything: the same processes ran throughout.
    expect(stack.processes().map((p) => p.pid)).toEqual(pids);
    expect(stack.processes().every((p) => p.running())).toBe(true);
    return { acknowledged: acknowledged.size, lost, answers, servedAfterKill: load.servedAfterKill() };
  } finally {
    await stack.stop();
    await cluster.stop();
  }
}

it('recovers from a primary killed under load without a restart, and reports the calls lost to asynchronous replication', async () => {
  const outcome = await failOverUnderLoad('async', 1, {});
  console.info(
    `cluster failover (asynchronous replication): ${outcome.acknowledged} calls answered 200, ${outcome.lost.length} (call, destination) deliveries lost; answers by status ${JSON.stringify(outcome.answers)}`,
  );
  // Only what the killed primary had not passed on can be lost: the calls of its last moment.
  expect(outcome.lost.length).toBeLessThan(outcome.acknowledged * DESTINATIONS.length * 0.05);
}, 240_000);

it('loses no call answered 200 in durable mode (INGEST_DURABLE_REPLICAS=1)', async () => {
  const outcome = await failOverUnderLoad('durable', 2, { INGEST_DURABLE_REPLICAS: '1', INGEST_DURABLE_TIMEOUT_MS: '500' });
  console.info(
    `cluster failover (durable mode): ${outcome.acknowledged} calls answered 200, all delivered; answers by status ${JSON.stringify(outcome.answers)}`,
  );
  expect(outcome.lost).toEqual([]);
}, 240_000);
