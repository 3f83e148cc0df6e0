/**
 * The whole pipeline on a real Redis Cluster of the test's own (3 primaries, 3 replicas, on
 * loopback ports), with the queues split into 6 shards (two per primary): every compiled service
 * connects with REDIS_CLUSTER_NODES. A real SDK sends calls from several sources to several
 * destinations; each call arrives once, signed, and the admin API, a replay, an audience and a
 * regulation work on the cluster as on one Redis.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Analytics } from '@segment/analytics-node';
import { SIGNATURE_HEADER, keySlot, keyspace, verifySignature } from '@eventrelay/config';
import {
  buildServices,
  eventually,
  startReceiver,
  startRedisCluster,
  startStack,
  type LocalRedisCluster,
  type Receiver,
} from '@eventrelay/testkit';
import { explainWith } from '../support/failover-load';

type Stack = Awaited<ReturnType<typeof startStack>>;

const SECRET = 'cluster-shared-secret';
const TOKEN = 'cluster-admin-token-0123456789';
const PREFIX = '{er-cluster}';
const SHARDS = 6;
const SOURCES = ['src-a', 'src-b', 'src-c', 'src-d'];
/** Each destination gets the calls of the sources listed. */
const DESTINATIONS: Record<string, string[]> = {
  'dst-1': ['src-a', 'src-b'],
  'dst-2': ['src-b', 'src-c'],
  'dst-3': ['src-c', 'src-d'],
  'dst-4': ['src-d', 'src-a'],
  'dst-5': SOURCES,
  'dst-fail': ['src-a'],
};
const writeKey = (sourceId: string) => `wk_cluster_${sourceId.replace('-', '_')}_0001`;

let dir: string;
let cluster: LocalRedisCluster;
let receiver: Receiver;
let stack: Stack;
let failing = true;
/** messageIds dst-fail's receiver answered 200, once healed. */
const replayed = new Set<string>();

async function admin<T = unknown>(method: string, route: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${stack.url('admin')}/admin/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Deliveries per destination (the receiver's path names it) and messageId. */
function deliveredTo(destinationId: string): string[] {
  return receiver.requests.filter((r) => r.path === `/${destinationId}`).map((r) => String(r.headers['x-eventrelay-message-id']));
}

beforeAll(async () => {
  buildServices();
  dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-cluster-'));
  // dst-fail's receiver answers 500 until the test heals it: its calls die (a 1 s retry window).
  receiver = await startReceiver({
    secret: SECRET,
    responder: (req) => ({ status: failing && req.path === '/dst-fail' ? 500 : 200 }),
    onAnswered: (req, status) => {
      if (status === 200 && req.path === '/dst-fail') replayed.add(String(req.headers['x-eventrelay-message-id']));
    },
  });
  const base = receiver.url.replace(/\/hook$/, '');
  const configFile = path.join(dir, 'eventrelay.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      sources: SOURCES.map((id) => ({ id, name: id, type: 'server', writeKey: writeKey(id) })),
      destinations: Object.entries(DESTINATIONS).map(([id, sourceIds]) => ({
        id,
        name: 'Webhooks',
        enabled: true,
        sourceIds,
        settings: { webhooks: [{ url: `${base}/${id}` }], sharedSecret: SECRET },
      })),
      audiences: [],
    }),
  );
  cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 1 });
  stack = await startStack({
    redisUrl: 'redis://127.0.0.1:6379',
    prefix: PREFIX,
    configFile,
    adminToken: TOKEN,
    env: { REDIS_CLUSTER_NODES: cluster.seeds, EVENTRELAY_SHARDS: String(SHARDS), DELIVERY_RETRY_BASE_MS: '200', RETRY_WINDOW_MS: '1000' },
  });
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  await cluster?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** On a failure, what the processes said last. */
const tellWhy = explainWith(() => stack.processes(), 3000);

describe('eventrelay on a Redis Cluster (3 primaries + 3 replicas, 6 shards)', () => {
  const sent = new Map<string, string[]>();

  it('spreads the shards over every primary: two each', async () => {
    const keys = keyspace(PREFIX, SHARDS);
    const owners = await Promise.all(keys.prefixes.map(async (p) => (await cluster.primaryOfSlot(keySlot(`${p}:deliver:wait`))).port));
    const perPrimary = new Map<number, number>();
    for (const port of owners) perPrimary.set(port, (perPrimary.get(port) ?? 0) + 1);
    expect([...perPrimary.values()]).toEqual([2, 2, 2]);
  });

  it('delivers every call of a real SDK once, signed, to each destination of its source', async () => {
    const clients = SOURCES.map(
      (sourceId) =>
        [
          sourceId,
          new Analytics({ writeKey: writeKey(sourceId), host: stack.url('ingest'), flushAt: 20, flushInterval: 50, maxRetries: 5 }),
        ] as const,
    );
    for (const [sourceId, analytics] of clients) {
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) {
        const messageId = `${sourceId}-${i}`;
        ids.push(messageId);
        analytics.track({ userId: `user-${sourceId}-${i % 7}`, event: 'Cluster Tested', properties: { i }, messageId });
      }
      sent.set(sourceId, ids);
    }
    await Promise.all(clients.map(([, a]) => a.closeAndFlush({ timeout: 20_000 })));

    const expected = (destinationId: string) => (DESTINATIONS[destinationId] ?? []).flatMap((s) => sent.get(s) ?? []).sort();
    await eventually(() => {
      for (const d of ['dst-1', 'dst-2', 'dst-3', 'dst-4', 'dst-5']) expect(deliveredTo(d).sort()).toEqual(expected(d));
      // dst-fail answers 500: once its circuit breaker opens, its calls wait unsent (the next test
      // finds every one of them a dead letter, those sent and those that waited).
      expect(deliveredTo('dst-fail').length).toBeGreaterThan(0);
    }, 30_000).catch(tellWhy);
    expect(receiver.badSignatures()).toEqual([]);
    for (const r of receiver.requests) expect(verifySignature(SECRET, r.body, r.headers[SIGNATURE_HEADER])).toBe(true);
    const body = JSON.parse(receiver.requests[0]!.body.toString()) as Record<string, unknown>;
    expect(body).toMatchObject({ type: 'track', event: 'Cluster Tested' });
    // Every primary holds eventrelay keys: the work is spread, not on the node of one hash tag.
    const counts = await cluster.eachPrimary(
      async (client) => (await client.scan('0', 'MATCH', '{er-cluster*', 'COUNT', 10_000))[1].length,
    );
    expect(counts.every((n) => n > 0)).toBe(true);
    // The queue gauges, read from every shard: one series per shard of the sharded queues.
    const metrics = await (await fetch(`${stack.url('router')}/metrics`)).text();
    for (let shard = 0; shard < SHARDS; shard++)
      expect(metrics).toMatch(new RegExp(`eventrelay_queue_jobs\\{queue="deliver",shard="${shard}",state="waiting"[^}]*\\} 0\\n`));
    expect(metrics).toMatch(/eventrelay_queue_jobs\{queue="regulation",shard="",state="waiting"[^}]*\} 0\n/);
  }, 60_000);

  it('serves the delivery log, dead letters and a replay through the admin API', async () => {
    const log = await admin<{ items: { outcome: string; messageId: string }[] }>('GET', '/destinations/dst-3/deliveries?limit=5');
    expect(log.status).toBe(200);
    expect(log.body.items).toHaveLength(5);
    expect(log.body.items.every((a) => a.outcome === 'success')).toBe(true);

    // dst-fail's receiver failed every attempt: its calls are dead letters on its shard.
    await eventually(async () => {
      const dead = await admin<{ items: unknown[] }>('GET', '/destinations/dst-fail/dead-letters?limit=100');
      expect(dead.body.items).toHaveLength(60);
    }, 20_000).catch(tellWhy);
    failing = false;
    const replay = await admin<{ replayId: string; replayed: number }>('POST', '/destinations/dst-fail/replay', { all: true });
    expect(replay.status).toBe(200);
    expect(replay.body.replayed).toBe(60);
    await eventually(async () => {
      const progress = await admin<{ delivered: number; pending: number }>('GET', `/destinations/dst-fail/replays/${replay.body.replayId}`);
      expect(progress.body).toMatchObject({ delivered: 60, pending: 0 });
    }, 30_000).catch(tellWhy);
    expect(replayed).toEqual(new Set(sent.get('src-a')));
    expect((await admin<{ items: unknown[] }>('GET', '/destinations/dst-fail/dead-letters')).body.items).toEqual([]);
  }, 90_000);

  it('builds an audience and carries out a regulation on the cluster', async () => {
    const created = await admin<{ id: string }>('POST', '/audiences', {
      name: 'Cluster Pros',
      sourceIds: ['src-b'],
      destinationIds: ['dst-2'],
      condition: { all: [{ trait: { key: 'plan', equals: 'pro' } }] },
    });
    expect(created.status).toBe(201);
    // src-b feeds profiles from when the router has seen the audience (within about a second of
    // its creation): the identifies are sent again until all five are members.
    await eventually(async () => {
      const analytics = new Analytics({ writeKey: writeKey('src-b'), host: stack.url('ingest'), flushAt: 1, flushInterval: 20 });
      for (let i = 0; i < 5; i++) analytics.identify({ userId: `pro-${i}`, traits: { plan: 'pro' } });
      await analytics.closeAndFlush({ timeout: 10_000 });
      await eventually(async () => {
        const audience = await admin<{ membership: { members: number } }>('GET', `/audiences/${created.body.id}`);
        expect(audience.body.membership.members).toBe(5);
      }, 2_000);
    }, 30_000).catch(tellWhy);

    const regulation = await admin<{ id: string }>('POST', '/regulations', {
      subjectType: 'USER_ID',
      subjectIds: ['pro-0'],
      regulationType: 'SUPPRESS',
    });
    expect(regulation.status).toBe(202);
    await eventually(async () => {
      const status = await admin<{ status: string }>('GET', `/regulations/${regulation.body.id}`);
      expect(status.body.status).toBe('finished');
    }, 30_000).catch(tellWhy);
    const suppressed = new Analytics({ writeKey: writeKey('src-b'), host: stack.url('ingest'), flushAt: 1, flushInterval: 20 });
    suppressed.track({ userId: 'pro-0', event: 'After Suppression', messageId: 'suppressed-1' });
    suppressed.track({ userId: 'pro-1', event: 'After Suppression', messageId: 'not-suppressed-1' });
    await suppressed.closeAndFlush({ timeout: 10_000 });
    await eventually(() => expect(deliveredTo('dst-1')).toContain('not-suppressed-1'), 20_000).catch(tellWhy);
    expect(deliveredTo('dst-1')).not.toContain('suppressed-1');
  }, 90_000);
});
