/**
 * Concurrent writes through the admin API: every write is planned against one snapshot and
 * committed only if nobody wrote in between (ConfigStore's compare-and-set), so a stored entity is
 * always exactly one writer's state, never a mix, and nothing is lost or written twice — within
 * one process and across two.
 */
import { Redis } from 'ioredis';
import type { Destination } from '@eventrelay/config';
import { ConfigStore, configKeys } from '@eventrelay/stores';
import { startTestAdmin, type AdminAnswer, type TestAdmin } from '../../../test/support/admin';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

const SOURCE_IDS = ['src-0', 'src-1', 'src-2', 'src-3', 'src-4', 'src-5'];
const WRITES = 50;

/** The complete, distinct state the i-th writer gives the destination. */
function state(i: number): Destination {
  const urls = 1 + (i % 5);
  return {
    id: 'dst-race',
    name: 'Webhooks',
    enabled: i % 2 === 0,
    // Bit j of i picks source j: a different subset for each writer (i < 64).
    sourceIds: SOURCE_IDS.filter((_, j) => (i >> j) & 1),
    settings: {
      webhooks: Array.from({ length: urls }, (_, k) => ({
        url: `https://w${i}.example.com/hook/${k}`,
        headers: { 'X-Writer': String(i), 'X-Url': `${i}-${k}`, ...(k % 2 === 0 ? { Authorization: `Bearer w${i}` } : {}) },
      })),
      sharedSecret: `whsec_writer_${String(i).padStart(2, '0')}_${'s'.repeat(i % 7)}`,
    },
  };
}

function patchOf(d: Destination) {
  return { enabled: d.enabled, sourceIds: d.sourceIds, settings: { webhooks: d.settings.webhooks, sharedSecret: d.settings.sharedSecret } };
}

/** What a read shows of a secret: whether it is set, and the last 4 characters of one of 8 or more. */
function hint(secret: string) {
  return secret.length >= 8 ? { set: true, last4: secret.slice(-4) } : { set: true };
}

/** Webhooks as a read shows them: header values are write-only. */
function hintedWebhooks(webhooks: Destination['settings']['webhooks']) {
  return webhooks.map((w) => ({
    ...w,
    ...(w.headers ? { headers: Object.fromEntries(Object.entries(w.headers).map(([k, v]) => [k, hint(v)])) } : {}),
  }));
}

function viewOf(d: Destination) {
  return { ...d, settings: { webhooks: hintedWebhooks(d.settings.webhooks), sharedSecret: hint(d.settings.sharedSecret!) } };
}

describe('concurrent admin writes', () => {
  let redis: Redis;
  const opened: TestAdmin[] = [];
  const prefixes: string[] = [];

  beforeAll(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterEach(async () => {
    for (const admin of opened.splice(0).reverse()) await admin.close();
    for (const prefix of prefixes.splice(0)) await deletePrefix(SHARED_REDIS_URL, prefix);
  });
  afterAll(async () => {
    await redis.quit();
  });

  /** `count` admin processes' worth of API on one fresh prefix. */
  async function admins(label: string, count: number): Promise<{ prefix: string; admins: TestAdmin[]; store: ConfigStore }> {
    const prefix = uniquePrefix(label);
    prefixes.push(prefix);
    const started: TestAdmin[] = [];
    for (let i = 0; i < count; i++) {
      const admin = await startTestAdmin({ prefix });
      opened.push(admin);
      started.push(admin);
    }
    return { prefix, admins: started, store: new ConfigStore(redis, prefix) };
  }

  async function auditCount(admin: TestAdmin, action: string): Promise<number> {
    const page = await admin.call('GET', '/audit?limit=1000');
    expect(page.body.nextCursor).toBeNull();
    return (page.body.items as { action: string }[]).filter((e) => e.action === action).length;
  }

  async function raceDestinationPatches(label: string, instances: number): Promise<void> {
    const { admins: list, store } = await admins(label, instances);
    const first = list[0]!;
    for (const id of SOURCE_IDS) expect((await first.call('POST', '/sources', { id, name: id, type: 'web' })).status).toBe(201);
    const initial = await first.call('POST', '/destinations', {
      id: 'dst-race',
      name: 'Webhooks',
      sourceIds: ['src-5'],
      settings: { webhooks: [{ url: 'https://initial.example.com/' }], sharedSecret: 'whsec_initial_secret' },
    });
    expect(initial.status).toBe(201);

    const states = Array.from({ length: WRITES }, (_, i) => state(i));
    // Sanity of the fixture: the 50 states are pairwise different in every part.
    expect(new Set(states.map((s) => JSON.stringify(s.sourceIds))).size).toBe(WRITES);
    expect(new Set(states.map((s) => s.settings.sharedSecret)).size).toBe(WRITES);

    const versionBefore = await store.version();
    const updatesBefore = await auditCount(first, 'destination.update');
    const answers: AdminAnswer[] = await Promise.all(
      states.map((s, i) => list[i % list.length]!.call('PATCH', '/destinations/dst-race', patchOf(s))),
    );

    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: WRITES }, () => 200));
    // Each writer is answered with its own state, whole.
    answers.forEach((a, i) => expect(a.body).toEqual(viewOf(states[i]!)));

    const stored = (await store.snapshot()).destinations.get('dst-race');
    const matching = states.filter((s) => JSON.stringify(s) === JSON.stringify(stored));
    expect(matching).toHaveLength(1);
    expect(stored).toEqual(matching[0]);
    // The API reads the same, in every instance.
    for (const admin of list) expect((await admin.call('GET', '/destinations/dst-race')).body).toEqual(viewOf(matching[0]!));

    expect(await store.version()).toBe(versionBefore + WRITES);
    expect((await auditCount(first, 'destination.update')) - updatesBefore).toBe(WRITES);
    expect(updatesBefore).toBe(0);
  }

  it('50 parallel PATCHes to one destination leave exactly one writer’s state, all answered 200, 50 audited, version +50', async () => {
    await raceDestinationPatches('race-one', 1);
  });

  it('the same across two admin instances on one prefix (cross-process compare-and-set)', async () => {
    await raceDestinationPatches('race-two', 2);
  });

  it('parallel PATCHes of different fields on two instances lose no update', async () => {
    const { admins: list, store } = await admins('race-fields', 2);
    await list[0]!.call('POST', '/sources', { id: 'src-0', name: 'S', type: 'web' });
    await list[0]!.call('POST', '/destinations', {
      id: 'dst-f',
      name: 'Webhooks',
      enabled: false,
      settings: { webhooks: [{ url: 'https://initial.example.com/' }], sharedSecret: 'whsec_initial_secret' },
    });
    // Writers of enabled never send webhooks and the other way round: a writer that planned on a
    // stale snapshot would put back a value it never meant to write.
    const hooksOf = (i: number) => [{ url: `https://f${i}.example.com/` }];
    const patches = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? { enabled: true } : { settings: { webhooks: hooksOf(i) } }));
    const versionBefore = await store.version();
    const answers = await Promise.all(patches.map((p, i) => list[i % 2]!.call('PATCH', '/destinations/dst-f', p)));
    expect(answers.map((a) => a.status)).toEqual(patches.map(() => 200));
    // Only true is ever written to enabled, and only writers' lists to webhooks: a stale plan would
    // put back false or the initial URL.
    const stored = (await store.snapshot()).destinations.get('dst-f')!;
    expect(stored.enabled).toBe(true);
    const written = patches.flatMap((p) => (p.settings ? [JSON.stringify(p.settings.webhooks)] : []));
    expect(written).toHaveLength(20);
    expect(written).toContain(JSON.stringify(stored.settings.webhooks));
    expect(stored.settings.sharedSecret).toBe('whsec_initial_secret');
    expect(stored.sourceIds).toEqual([]);
    // Each webhooks writer was answered with its own list.
    answers.forEach((a, i) => {
      if (i % 2 === 1) expect(a.body.settings.webhooks).toEqual(hintedWebhooks(hooksOf(i)));
    });
    expect(await store.version()).toBe(versionBefore + 40);
  });

  it('a source deleted while destinations naming it are created on another instance leaves no dangling reference', async () => {
    const { admins: list, store } = await admins('race-detach', 2);
    for (const id of ['doomed', 'keeper']) await list[0]!.call('POST', '/sources', { id, name: id, type: 'web' });
    const creations = Array.from({ length: 20 }, (_, i) =>
      list[i % 2]!.call('POST', '/destinations', {
        id: `dst-${i}`,
        name: 'Webhooks',
        sourceIds: ['doomed', 'keeper'],
        settings: { webhooks: [{ url: `https://d${i}.example.com/` }] },
      }),
    );
    const deletion = list[1]!.call('DELETE', '/sources/doomed');
    const answers = await Promise.all(creations);
    expect((await deletion).status).toBe(204);

    for (const a of answers) {
      if (a.status === 201) expect(a.body.sourceIds).toEqual(['doomed', 'keeper']);
      else
        expect({ status: a.status, fields: a.body.fields }).toEqual({
          status: 400,
          fields: [{ field: 'sourceIds[0]', message: expect.any(String) }],
        });
    }
    const snapshot = await store.snapshot();
    expect(snapshot.sources.has('doomed')).toBe(false);
    const created = answers.filter((a) => a.status === 201).map((a) => a.body.id as string);
    expect([...snapshot.destinations.keys()].sort()).toEqual([...created].sort());
    for (const d of snapshot.destinations.values()) expect(d.sourceIds).toEqual(['keeper']);
  });

  it('20 parallel creations of distinct sources all succeed', async () => {
    const { admins: list, store } = await admins('create-distinct', 2);
    const versionBefore = await store.version();
    const ids = Array.from({ length: 20 }, (_, i) => `src-par-${i}`);
    const answers = await Promise.all(
      ids.map((id, i) => list[i % 2]!.call('POST', '/sources', { id, name: `Source ${i}`, type: 'server' })),
    );
    expect(answers.map((a) => a.status)).toEqual(ids.map(() => 201));
    const listed = (await list[0]!.call('GET', '/sources')).body as { id: string; name: string; writeKey: string }[];
    expect(listed.map((s) => s.id)).toEqual([...ids].sort());
    expect(new Set(listed.map((s) => s.writeKey)).size).toBe(20);
    for (const s of listed) expect(s.name).toBe(`Source ${ids.indexOf(s.id)}`);
    expect(await store.version()).toBe(versionBefore + 20);
    expect(await auditCount(list[0]!, 'source.create')).toBe(20);
    // Every write key maps to its own source.
    for (const s of listed) expect((await store.sourceByWriteKey(s.writeKey))?.id).toBe(s.id);
  });

  it.each([
    { instances: 1, label: 'create-same-one' },
    { instances: 2, label: 'create-same-two' },
  ])('20 parallel creations of one id on $instances instance(s): one 201, nineteen 409 conflict', async ({ instances, label }) => {
    const { prefix, admins: list, store } = await admins(label, instances);
    const versionBefore = await store.version();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        list[i % instances]!.call('POST', '/sources', { id: 'src-same', name: `Claimant ${i}`, type: 'web' }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    for (const a of answers.filter((x) => x.status === 409))
      expect(a.body).toEqual({
        success: false,
        code: 'conflict',
        message: expect.any(String),
        fields: [{ field: 'id', message: expect.any(String) }],
      });

    const winner = answers.find((a) => a.status === 201)!.body as { id: string; name: string; writeKey: string };
    const listed = (await list[0]!.call('GET', '/sources')).body;
    expect(listed).toEqual([winner]);
    expect(await store.version()).toBe(versionBefore + 1);
    expect(await auditCount(list[0]!, 'source.create')).toBe(1);
    // Only the winner's write key was ever mapped.
    expect(await redis.hkeys(configKeys(prefix).sourcesByWriteKey)).toEqual([winner.writeKey]);
    expect((await store.sourceByWriteKey(winner.writeKey))?.name).toBe(winner.name);
  });
});
