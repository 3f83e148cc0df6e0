/**
 * Regulations end to end (docs/spec.md §6): created through the admin API, carried out by the
 * audiences service, delete notifications delivered by webhook-delivery to real receivers, and
 * suppression applied by the router. Real Redis under a unique prefix.
 */
import type { DeadLetter, Regulation } from '@eventrelay/config';
import { DeadLetterStore, ErasureTombstones } from '@eventrelay/stores';
import { startTestAdmin, type TestAdmin } from '../../../test/support/admin';
import { eventually, type Receiver, startReceiver, sleep } from '@eventrelay/testkit';
import { startTestPipeline, trackCall, webhookDestination, type TestPipeline } from '../../../test/support/pipeline';
import { testScope } from '../../../test/support/scope';

const bodies = (r: Receiver) =>
  r.requests.map((req) => ({
    body: JSON.parse(req.body.toString('utf8')) as Record<string, unknown>,
    text: req.body.toString('utf8'),
    headers: req.headers,
  }));
const deletes = (r: Receiver) => bodies(r).filter((b) => b.body['type'] === 'delete');

function identify(messageId: string, userId: string, traits: Record<string, unknown>) {
  const ts = new Date().toISOString();
  return { type: 'identify' as const, messageId, userId, traits, timestamp: ts, receivedAt: ts };
}

describe('regulations', () => {
  const scope = testScope();

  async function setup(label: string): Promise<{ p: TestPipeline; admin: TestAdmin; a: Receiver; b: Receiver; c: Receiver }> {
    const [a, b, c] = [scope.track(await startReceiver()), scope.track(await startReceiver()), scope.track(await startReceiver())];
    const p = scope.track(await startTestPipeline({ label, audiences: true }));
    const source = (id: string) => ({ id, name: id, type: 'server' as const, writeKey: `wk_${id}_${p.prefix.replace(/\W/g, '')}` });
    // src-a and src-b have the Webhooks destination enabled; src-c has it disabled.
    await p.store.apply({
      sources: [p.source, source('src-a'), source('src-b'), source('src-c')],
      destinations: [
        webhookDestination('hook-a', [a.url], { sourceIds: ['src-a', 'src-test'] }),
        webhookDestination('hook-b', [b.url], { sourceIds: ['src-b'] }),
        webhookDestination('hook-c', [c.url], { sourceIds: ['src-c'], enabled: false }),
      ],
      audiences: [],
    });
    await p.router.refreshConfig();
    await p.delivery!.refreshConfig();
    await p.audiences!.refreshConfig();
    const admin = scope.track(await startTestAdmin({ prefix: p.prefix }));
    return { p, admin, a, b, c };
  }

  async function finished(admin: TestAdmin, id: string): Promise<Regulation> {
    return eventually(async () => {
      const res = await admin.call<Regulation>('GET', `/regulations/${id}`);
      expect(res.body.status).toBe('finished');
      return res.body;
    }, 15_000);
  }

  async function regulate(admin: TestAdmin, body: Record<string, unknown>): Promise<string> {
    const res = await admin.call('POST', '/regulations', { subjectType: 'USER_ID', ...body });
    expect(res.status).toBe(202);
    return res.body.id as string;
  }

  it('DELETE over two sources with Webhooks enabled and one without: exactly 2 delete notifications per user, and the user’s data erased', async () => {
    const { p, admin, a, b, c } = await setup('reg-delete');
    // Profiles and audience membership for u-1 and u-2 (u-3 keeps everything): the audience first,
    // so that src-a's calls feed profiles.
    const audience = await admin.call('POST', '/audiences', {
      id: 'trial',
      name: 'Trial',
      sourceIds: ['src-a'],
      destinationIds: [],
      condition: { trait: { key: 'plan', equals: 'trial' } },
    });
    expect(audience.status).toBe(201);
    await p.router.refreshConfig();
    await p.audiences!.refreshConfig();
    await p.route(
      [identify('s-1', 'u-1', { plan: 'trial' }), identify('s-2', 'u-2', { plan: 'trial' }), identify('s-3', 'u-3', { plan: 'trial' })],
      'seed',
      'src-a',
    );
    await eventually(async () => expect(await p.admin.zcard(`${p.prefix}:prof:index`)).toBe(3));
    await eventually(async () =>
      expect((await admin.call('GET', '/audiences/trial')).body.membership).toMatchObject({ status: 'ready', members: 3 }),
    );
    expect(await p.admin.zcard(`${p.prefix}:prof:src:src-a`)).toBe(3);
    // Event-debugger entries of u-1 and u-3 on src-b, as ingest writes them.
    const ring = `${p.prefix}:debug:src-b`;
    await p.admin.lpush(
      ring,
      JSON.stringify({ at: 't1', outcome: 'accepted', call: { userId: 'u-1', event: 'secret stuff' } }),
      JSON.stringify({ at: 't2', outcome: 'accepted', call: { userId: 'u-3' } }),
    );
    // Dead letters on hook-c (disabled): u-1's call from src-c and from src-test (not regulated),
    // u-3's from src-c, and a delete notice for u-1, as webhook-delivery writes them.
    const letters = new DeadLetterStore(p.admin, p.prefix, { maxPerDestination: 100 });
    const letter = (messageId: string, sourceId: string, call: Record<string, unknown>): DeadLetter => ({
      jobId: `hook-c-${sourceId}-${messageId}`,
      job: { sourceId, destinationId: 'hook-c', call: { messageId, timestamp: 'x', ...call } as DeadLetter['job']['call'] },
      attempts: 1,
      lastError: 'refused',
      urls: [],
      firstAttemptAt: new Date().toISOString(),
      deadAt: new Date().toISOString(),
    });
    for (const l of [
      letter('d-1', 'src-c', { type: 'track', userId: 'u-1', event: 'secret stuff' }),
      letter('d-2', 'src-test', { type: 'track', userId: 'u-1', event: 'other source' }),
      letter('d-3', 'src-c', { type: 'track', userId: 'u-3', event: 'kept' }),
      letter('d-4', 'src-c', { type: 'delete', userId: 'u-1' }),
    ])
      await letters.add(l);
    await a.waitFor(3); // the seed identifies, delivered to hook-a
    const seedRequests = a.requests.length;

    const id = await regulate(admin, { regulationType: 'DELETE', subjectIds: ['u-1', 'u-2'], sourceIds: ['src-a', 'src-b', 'src-c'] });
    const record = await finished(admin, id);
    expect(record).toMatchObject({
      regulationType: 'DELETE',
      subjectCount: 2,
      sourceIds: ['src-a', 'src-b', 'src-c'],
      counts: { subjectsDone: 2, deleteNotices: 4, profilesErased: 2 },
    });
    expect(record.counts.suppressed).toBeUndefined();

    await a.waitFor(seedRequests + 2);
    await b.waitFor(2);
    await sleep(500);
    const all = [...deletes(a), ...deletes(b), ...deletes(c)];
    expect(all).toHaveLength(4);
    expect(deletes(c)).toHaveLength(0);
    for (const r of [a, b])
      expect(
        deletes(r)
          .map((d) => d.body['userId'])
          .sort(),
      ).toEqual(['u-1', 'u-2']);
    for (const d of all) {
      // docs/spec.md §4: exactly type, userId, timestamp; no version.
      expect(Object.keys(d.body).sort()).toEqual(['timestamp', 'type', 'userId']);
      expect(d.body['timestamp']).toBe(record.createdAt);
      expect(d.headers['x-eventrelay-message-id']).toMatch(new RegExp(`^del-${id}-[A-Za-z0-9_-]+$`));
    }

    // Erased: profiles, membership, debugger entries. u-3 keeps all of it.
    expect(await p.admin.exists(`${p.prefix}:prof:u:u-1`, `${p.prefix}:prof:u:u-2`)).toBe(0);
    expect(await p.admin.exists(`${p.prefix}:prof:u:u-3`)).toBe(1);
    expect(await p.admin.zrange(`${p.prefix}:prof:index`, 0, -1)).toEqual(['u-3']);
    expect(await p.admin.zrange(`${p.prefix}:prof:src:src-a`, 0, -1)).toEqual(['u:u-3']);
    expect(await p.admin.smembers(`${p.prefix}:aud:trial:members`)).toEqual(['u-3']);
    const debug = (await p.admin.lrange(ring, 0, -1)).map((e) => JSON.parse(e) as Record<string, unknown>);
    expect(debug).toEqual([
      { at: 't2', outcome: 'accepted', call: { userId: 'u-3' } },
      { at: 't1', outcome: 'accepted', message: 'erased by a deletion regulation' },
    ]);
    expect(JSON.stringify(await admin.call('GET', '/sources/src-b/events'))).not.toContain('secret stuff');
    // u-1's dead letter from a regulated source is gone, with its messageId index; the rest stay.
    expect((await letters.list('hook-c', 10)).map((l) => l.job.call.messageId).sort()).toEqual(['d-2', 'd-3', 'd-4']);
    expect(await p.admin.hexists(`${p.prefix}:dead-by-message:hook-c`, 'd-1')).toBe(0);
    expect(await p.admin.hexists(`${p.prefix}:dead-by-message:hook-c`, 'd-3')).toBe(1);
    // The record never holds the subject ids.
    expect(JSON.stringify(await p.admin.hgetall(`${p.prefix}:reg:regulations`))).not.toContain('u-1');
    // A tombstone per user and affected source, for webhook-delivery, no later than `finished`.
    const tombstones = new ErasureTombstones(p.admin, p.prefix);
    expect(await tombstones.count()).toBe(6);
    const erasedAt = await tombstones.erasedAt([
      { sourceId: 'src-a', userId: 'u-1' },
      { sourceId: 'src-c', userId: 'u-2' },
      { sourceId: 'src-test', userId: 'u-1' },
      { sourceId: 'src-a', userId: 'u-3' },
    ]);
    expect(erasedAt.map((at) => at !== undefined && at <= Date.parse(record.finishedAt!))).toEqual([true, true, false, false]);
  });

  it('the periodic sync prunes deletion tombstones once older than 37 days, and keeps the others', async () => {
    let now = Date.now();
    const p = scope.track(
      await startTestPipeline({
        label: 'reg-prune',
        audiences: true,
        audiencesClock: () => now,
        audiencesEnv: { AUDIENCES_SYNC_INTERVAL_MS: '200' },
      }),
    );
    const tombstones = new ErasureTombstones(p.admin, p.prefix);
    await tombstones.record(['src-test'], ['u-old'], now - 30 * 86_400_000);
    await tombstones.record(['src-test'], ['u-new'], now - 86_400_000);
    // Both still matter today; 8 days later only the newer one does.
    now += 8 * 86_400_000;
    await eventually(async () => expect(await tombstones.count()).toBe(1));
    expect(
      await tombstones.erasedAt([
        { sourceId: 'src-test', userId: 'u-old' },
        { sourceId: 'src-test', userId: 'u-new' },
      ]),
    ).toEqual([undefined, now - 9 * 86_400_000]);
  });

  it('SUPPRESS stops that user’s later calls while other users’ keep flowing', async () => {
    const { p, admin, a } = await setup('reg-suppress');
    // An audience reads src-test, so its calls feed profiles: good-user's do, bad-user's must not.
    const audience = {
      id: 'all',
      name: 'All',
      sourceIds: ['src-test'],
      destinationIds: [],
      condition: { trait: { key: 'plan', exists: false } },
    };
    expect((await admin.call('POST', '/audiences', audience)).status).toBe(201);
    await p.router.refreshConfig();
    const id = await regulate(admin, { regulationType: 'SUPPRESS', subjectIds: ['bad-user'] });
    expect((await finished(admin, id)).counts).toEqual({ subjectsDone: 1, deleteNotices: 0, profilesErased: 0, suppressed: 1 });

    await p.route([
      trackCall('t-bad-1', { userId: 'bad-user' }),
      trackCall('t-good-1', { userId: 'good-user' }),
      trackCall('t-bad-2', { userId: 'bad-user' }),
      trackCall('t-good-2', { userId: 'good-user' }),
    ]);
    await a.waitFor(2);
    await sleep(500);
    expect(a.requests.map((r) => r.headers['x-eventrelay-message-id']).sort()).toEqual(['t-good-1', 't-good-2']);
    // No delete notification either, and the suppressed user's calls feed no profile.
    expect(deletes(a)).toHaveLength(0);
    await eventually(async () => expect(await p.admin.exists(`${p.prefix}:prof:u:good-user`)).toBe(1));
    expect(await p.admin.exists(`${p.prefix}:prof:u:bad-user`)).toBe(0);
  });

  it('SUPPRESS_WITH_DELETE on one source: notices to that source only, and only its calls are dropped', async () => {
    const { p, admin, a, b } = await setup('reg-both');
    const id = await regulate(admin, { regulationType: 'SUPPRESS_WITH_DELETE', subjectIds: ['u-9'], sourceIds: ['src-b'] });
    expect((await finished(admin, id)).counts).toMatchObject({ subjectsDone: 1, deleteNotices: 1, suppressed: 1 });
    await b.waitFor(1);
    expect(deletes(b).map((d) => d.body['userId'])).toEqual(['u-9']);
    await p.route([trackCall('on-b', { userId: 'u-9' })], 'b-1', 'src-b');
    await p.route([trackCall('on-test', { userId: 'u-9' })]);
    await a.waitFor(1);
    await sleep(500);
    expect(a.requests.map((r) => r.headers['x-eventrelay-message-id'])).toEqual(['on-test']);
    expect(b.requests).toHaveLength(1);
  });
});
