/**
 * Durable mode (INGEST_DURABLE_REPLICAS) against a real primary and replica of the test's own: a
 * 200 means a replica holds the calls, so losing the primary loses none of them. The replica is
 * cut off with REPLICAOF NO ONE, as a network partition would cut it off: from then on the primary
 * writes alone, which is exactly the window in which an answered call can be lost without it.
 */
import { Redis } from 'ioredis';
import { CallBatches } from '@eventrelay/stores';
import { startReplicatedRedis, type ReplicatedRedis } from '@eventrelay/testkit';
import { post, startTestIngest, type TestIngest } from '../../../test/support/ingest';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The messageIds of every call stored under `prefix` on `redis` (its call batches, routed or not). */
async function storedMessageIds(redis: Redis, prefix: string): Promise<Set<string>> {
  const batches = new CallBatches(redis, prefix);
  const ids = new Set<string>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:batch:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys)
      for (const part of await batches.contents(key.slice(`${prefix}:batch:`.length))) for (const c of part.calls) ids.add(c.messageId);
  } while (cursor !== '0');
  return ids;
}

const linkUp = async (replica: Redis) => /^master_link_status:up/m.test(await replica.info('replication'));

describe('durable mode: answered 200 only once a replica holds the calls', () => {
  let redis: ReplicatedRedis;
  let primary: Redis;
  let replica: Redis;
  let durable: TestIngest;
  let plain: TestIngest;

  beforeAll(async () => {
    redis = await startReplicatedRedis();
    primary = new Redis(redis.primary.url, { maxRetriesPerRequest: 1 });
    replica = new Redis(redis.replica.url, { maxRetriesPerRequest: 1 });
    const env = { INGEST_FLUSH_MS: '1' };
    durable = await startTestIngest({
      label: 'durable',
      redisUrl: redis.primary.url,
      env: { ...env, INGEST_DURABLE_REPLICAS: '1', INGEST_DURABLE_TIMEOUT_MS: '300' },
    });
    plain = await startTestIngest({ label: 'plain', redisUrl: redis.primary.url, env });
  });
  afterAll(async () => {
    await durable?.close().catch(() => undefined);
    await plain?.close().catch(() => undefined);
    primary?.disconnect();
    replica?.disconnect();
    await redis?.close();
  });

  const send = async (t: TestIngest, messageId: string) => {
    const res = await post(t.url, '/v1/track', { userId: 'u1', event: 'Durable', messageId }, { writeKey: t.writeKey });
    return res;
  };

  it('answers 503 not_replicated while no replica confirms, then 200 again once one does; every 200 is on the replica', async () => {
    for (let i = 0; i < 5; i++) expect((await send(durable, `d-a-${i}`)).status).toBe(200);
    // Each 200 came after the replica confirmed: the calls are there, read from the replica at once.
    const onReplica = await storedMessageIds(replica, durable.prefix);
    for (let i = 0; i < 5; i++) expect(onReplica).toContain(`d-a-${i}`);

    await replica.replicaof('NO', 'ONE');
    // The first flush after the cut waits out its WAIT; within the guard's next sample (500 ms), the
    // intake refuses without storing anything at all.
    const refused = await send(durable, 'd-b-0');
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({ success: false, code: 'not_replicated' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    await sleep(600);
    const guarded = await send(durable, 'd-b-1');
    expect(guarded.status).toBe(503);
    expect(guarded.json).toMatchObject({ success: false, code: 'not_replicated' });
    expect(guarded.json['message']).toMatch(/fewer than 1 Redis replica\(s\) online .*nothing was stored/);
    expect(await primary.exists(`${durable.prefix}:dedupe:${durable.source.id}:d-b-1`)).toBe(0);
    const metrics = await (await fetch(`${durable.url}/metrics`)).text();
    expect(metrics).toMatch(/eventrelay_ingest_calls_total\{[^}]*outcome="rejected"[^}]*reason="not_replicated"[^}]*\} 2/);
    expect(metrics).toMatch(/eventrelay_ingest_replica_wait_seconds_count\{[^}]*result="not_replicated"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/eventrelay_ingest_redis_replicas_online\{[^}]*\} 0/);

    await replica.replicaof('127.0.0.1', String(redis.primary.port));
    for (let i = 0; i < 100 && !(await linkUp(replica)); i++) await sleep(100);
    expect(await linkUp(replica)).toBe(true);
    // The client's retry of the refused calls, as an SDK would (Retry-After: 1): once the guard has
    // seen the replica again, 200. d-b-0 is then a duplicate on the primary, answered once its
    // WAIT (which covers the first copy too) is confirmed.
    const retried: number[] = [];
    for (const id of ['d-b-0', 'd-b-1']) {
      let status = 0;
      for (let i = 0; i < 20 && status !== 200; i++) {
        status = (await send(durable, id)).status;
        if (status !== 200) await sleep(250);
      }
      retried.push(status);
    }
    expect(retried).toEqual([200, 200]);
    expect(await storedMessageIds(replica, durable.prefix)).toContain('d-b-1');
    expect(await (await fetch(`${durable.url}/metrics`)).text()).toMatch(/eventrelay_ingest_redis_replicas_online\{[^}]*\} 1/);
  });

  it('loses no call it answered 200 when the primary is lost; without durable mode the calls answered meanwhile are gone', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await send(durable, `d-c-${i}`);
      expect([r.status, r.json]).toEqual([200, { success: true }]);
      expect((await send(plain, `p-c-${i}`)).status).toBe(200);
    }
    // The replica is cut off, then the primary dies: the replica is what is left.
    await replica.replicaof('NO', 'ONE');
    const durableAnswers: number[] = [];
    const plainAnswers: number[] = [];
    for (let i = 0; i < 5; i++) {
      durableAnswers.push((await send(durable, `d-d-${i}`)).status);
      plainAnswers.push((await send(plain, `p-d-${i}`)).status);
    }
    await redis.primary.stop();

    const durableLeft = await storedMessageIds(replica, durable.prefix);
    const plainLeft = await storedMessageIds(replica, plain.prefix);
    // Durable mode answered nothing it could not confirm, and kept everything it answered.
    expect(durableAnswers).toEqual([503, 503, 503, 503, 503]);
    for (let i = 0; i < 5; i++) expect(durableLeft).toContain(`d-c-${i}`);
    // Without it, five calls were answered 200 and are not on the surviving server.
    expect(plainAnswers).toEqual([200, 200, 200, 200, 200]);
    for (let i = 0; i < 5; i++) expect(plainLeft).toContain(`p-c-${i}`);
    expect([0, 1, 2, 3, 4].filter((i) => plainLeft.has(`p-d-${i}`))).toEqual([]);
    // Back, so that the services close as they would (a dead Redis keeps clients reconnecting).
    await redis.primary.start();
  });
});
