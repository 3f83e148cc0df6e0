/**
 * Audiences and regulations through the admin API over real HTTP against real Redis, with no
 * audiences service running: what the admin API itself stores, answers, queues and audits. The
 * membership the audiences service would keep is written here by hand under its keys.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import {
  audienceFingerprint,
  checkConfig,
  queueCatalog,
  type Audience,
  type AudienceCondition,
  type RegulationJob,
} from '@eventrelay/config';
import { ConfigStore, DeletionReceipts } from '@eventrelay/stores';
import { startTestAdmin, type AdminAnswer, type TestAdmin } from '../../../test/support/admin';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

const PRO: AudienceCondition = { trait: { key: 'plan', equals: 'pro' } };
const FIXED_NOW = Date.parse('2026-03-04T05:06:07.890Z');

interface Started {
  readonly admin: TestAdmin;
  readonly prefix: string;
}

type AuditItem = { action: string; targetId: string; tokenId: string; at: string; details?: Record<string, unknown> };

/**
 * Each test's admin on a prefix of its own with two sources and two destinations; admins and
 * queues closed, and the prefix wiped, after each test.
 */
function scope() {
  const admins: TestAdmin[] = [];
  const queues: Queue[] = [];
  const prefixes: string[] = [];
  const state: { redis?: Redis } = {};
  beforeAll(() => {
    state.redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterEach(async () => {
    for (const queue of queues.splice(0)) await queue.close();
    for (const admin of admins.splice(0).reverse()) await admin.close();
    for (const prefix of prefixes.splice(0)) await deletePrefix(SHARED_REDIS_URL, prefix);
  });
  afterAll(async () => {
    await state.redis?.quit();
  });
  const redis = (): Redis => state.redis!;
  return {
    redis,
    async start(label: string, options: { clock?: () => number } = {}): Promise<Started> {
      const prefix = uniquePrefix(label);
      prefixes.push(prefix);
      const admin = await startTestAdmin({ prefix, ...options });
      admins.push(admin);
      const answers = [
        await admin.call('POST', '/sources', { id: 'src-a', name: 'A', type: 'web' }),
        await admin.call('POST', '/sources', { id: 'src-b', name: 'B', type: 'server' }),
        await admin.call('POST', '/destinations', {
          id: 'dst-a',
          name: 'Webhooks',
          enabled: true,
          sourceIds: ['src-a'],
          settings: { webhooks: [{ url: 'https://a.example.com/in' }] },
        }),
        await admin.call('POST', '/destinations', {
          id: 'dst-b',
          name: 'Webhooks',
          sourceIds: ['src-b'],
          settings: { webhooks: [{ url: 'https://b.example.com/in' }] },
        }),
      ];
      expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
      return { admin, prefix };
    },
    /** The regulation queue as the audiences service would open it. */
    regulationQueue(prefix: string): Queue<RegulationJob> {
      const queue = new Queue<RegulationJob>(queueCatalog.regulation.name, { connection: redis(), prefix });
      queues.push(queue as Queue);
      return queue;
    },
    /** Everything a refused write must leave alone. */
    async everything({ admin, prefix }: Started) {
      const audiences = await admin.call('GET', '/audiences');
      const audit = await admin.call('GET', '/audit?limit=1000');
      expect([audiences.status, audit.status]).toEqual([200, 200]);
      const snapshot = await new ConfigStore(redis(), prefix).snapshot();
      return {
        version: snapshot.version,
        audiences: audiences.body as unknown,
        audit: audit.body as unknown,
        regulations: await redis().hgetall(`${prefix}:reg:regulations`),
      };
    },
  };
}

const newAudience = (extra: Record<string, unknown> = {}) => ({
  name: 'Pro users',
  sourceIds: ['src-a'],
  destinationIds: ['dst-a'],
  condition: PRO,
  ...extra,
});

/** A condition `levels` combinators deep around a trait test (so levels + 1 nodes deep). */
function nested(kind: 'not' | 'all' | 'any', levels: number): AudienceCondition {
  let condition: AudienceCondition = PRO;
  for (let i = 0; i < levels; i++) condition = kind === 'not' ? { not: condition } : { [kind]: [condition] };
  return condition;
}

async function auditItems(admin: TestAdmin): Promise<AuditItem[]> {
  const page = await admin.call('GET', '/audit?limit=1000');
  expect(page.status).toBe(200);
  return page.body.items as AuditItem[];
}

function expectInvalid(res: AdminAnswer, fields: readonly string[]): void {
  expect({ status: res.status, success: res.body?.success, code: res.body?.code }).toEqual({
    status: 400,
    success: false,
    code: 'invalid_request',
  });
  expect((res.body.fields as { field: string }[]).map((f) => f.field)).toEqual(fields);
  for (const f of res.body.fields as { field: string; message: string }[]) expect(f.message.length).toBeGreaterThan(0);
  expect(typeof res.body.message).toBe('string');
}

function expectNotFound(res: AdminAnswer): void {
  expect(res.status).toBe(404);
  expect(res.body).toEqual({ success: false, code: 'not_found', message: expect.any(String) });
}

const stored = ({ id, name, sourceIds, destinationIds, condition }: Audience): Audience => ({
  id,
  name,
  sourceIds,
  destinationIds,
  condition,
});

describe('admin API: audiences', () => {
  const s = scope();

  describe('POST /audiences', () => {
    it('creates an audience with a generated id: 201 with its view (snake_case trait key, membership pending with 0 members), then GET shows it and the audit log has audience.create', async () => {
      const started = await s.start('aud-create');
      const { admin } = started;
      const condition: AudienceCondition = {
        all: [{ trait: { key: 'plan', equals: 'trial' } }, { event: { name: 'Order Completed', atLeast: 2, withinDays: 30 } }],
      };
      const res = await admin.call('POST', '/audiences', {
        name: 'Trial Users 2',
        sourceIds: ['src-a', 'src-b'],
        destinationIds: ['dst-a'],
        condition,
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^aud_[0-9a-f]{16}$/),
        name: 'Trial Users 2',
        sourceIds: ['src-a', 'src-b'],
        destinationIds: ['dst-a'],
        condition,
        traitKey: 'trial_users_2',
        membership: { status: 'pending', members: 0 },
      });
      const id = res.body.id as string;

      const got = await admin.call('GET', `/audiences/${id}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(res.body);
      const list = await admin.call('GET', '/audiences');
      expect(list.status).toBe(200);
      expect(list.body).toEqual([res.body]);

      const [latest, ...rest] = await auditItems(admin);
      expect(latest).toMatchObject({
        action: 'audience.create',
        targetId: id,
        details: expect.objectContaining({ traitKey: 'trial_users_2' }),
      });
      expect(rest.map((e) => e.action)).not.toContain('audience.create');

      // A second one gets another id.
      const second = await admin.call('POST', '/audiences', newAudience({ name: 'Someone else' }));
      expect(second.status).toBe(201);
      expect(second.body.id).toMatch(/^aud_[0-9a-f]{16}$/);
      expect(second.body.id).not.toBe(id);
    });

    it('creates audiences with given ids; GET /audiences lists them by id; GET /config exports them, and applying the export changes nothing', async () => {
      const { admin, prefix } = await s.start('aud-list');
      const bodies = [
        { id: 'charlie', name: 'HTMLParser Café', sourceIds: ['src-b'], destinationIds: [], condition: { event: { name: 'Signed Up' } } },
        {
          id: 'alpha',
          name: 'VIP buyers',
          sourceIds: ['src-a', 'src-b'],
          destinationIds: ['dst-a', 'dst-b'],
          condition: { any: [PRO, { not: { trait: { key: 'churned', exists: true } } }] },
        },
        { id: 'bravo', name: 'Pro plan', sourceIds: ['src-a'], destinationIds: ['dst-b'], condition: { trait: { key: 'seats', gte: 10 } } },
      ];
      const created: AdminAnswer[] = [];
      for (const body of bodies) created.push(await admin.call('POST', '/audiences', body));
      expect(created.map((c) => c.status)).toEqual([201, 201, 201]);
      expect(created.map((c) => [c.body.id, c.body.traitKey])).toEqual([
        ['charlie', 'html_parser_cafe'],
        ['alpha', 'vip_buyers'],
        ['bravo', 'pro_plan'],
      ]);
      for (const [i, c] of created.entries())
        expect(c.body).toEqual({ ...bodies[i], traitKey: c.body.traitKey, membership: { status: 'pending', members: 0 } });

      const list = await admin.call('GET', '/audiences');
      expect(list.body.map((a: { id: string }) => a.id)).toEqual(['alpha', 'bravo', 'charlie']);
      expect(list.body).toEqual([created[1]!.body, created[2]!.body, created[0]!.body]);

      const exported = await admin.call('GET', '/config');
      expect(exported.status).toBe(200);
      expect(exported.body.audiences).toEqual([bodies[1], bodies[2], bodies[0]]);
      const store = new ConfigStore(s.redis(), prefix);
      await store.apply(checkConfig(exported.body, 'GET /admin/v1/config'));
      expect((await admin.call('GET', '/config')).body).toEqual(exported.body);
      expect((await admin.call('GET', '/audiences')).body).toEqual(list.body);
    });

    it('accepts the edges of the condition schema: 10 levels deep, withinDays 90, atLeast 1', async () => {
      const { admin } = await s.start('aud-edges');
      const deepNot = await admin.call(
        'POST',
        '/audiences',
        newAudience({ id: 'deep-not', name: 'Deep not', condition: nested('not', 9) }),
      );
      const deepAll = await admin.call(
        'POST',
        '/audiences',
        newAudience({ id: 'deep-all', name: 'Deep all', condition: nested('all', 9) }),
      );
      const events = await admin.call(
        'POST',
        '/audiences',
        newAudience({ id: 'events', name: 'Events', condition: { event: { name: 'Login', atLeast: 1, withinDays: 90 } } }),
      );
      expect([deepNot.status, deepAll.status, events.status]).toEqual([201, 201, 201]);
      expect((await admin.call('GET', '/audiences/deep-not')).body.condition).toEqual(nested('not', 9));
    });

    const refusals: { name: string; body: Record<string, unknown>; fields: string[] }[] = [
      { name: 'an unknown source', body: newAudience({ sourceIds: ['src-a', 'ghost'] }), fields: ['sourceIds[1]'] },
      { name: 'an unknown destination', body: newAudience({ destinationIds: ['dst-a', 'dst-b', 'nope'] }), fields: ['destinationIds[2]'] },
      {
        name: 'an unknown source and destination',
        body: newAudience({ sourceIds: ['ghost'], destinationIds: ['nope'] }),
        fields: ['sourceIds[0]', 'destinationIds[0]'],
      },
      { name: 'empty sourceIds', body: newAudience({ sourceIds: [] }), fields: ['sourceIds'] },
      { name: 'a name without a letter or digit', body: newAudience({ name: ' !!! -- ' }), fields: ['name'] },
      { name: 'a name that gives the trait key of another audience', body: newAudience({ name: 'trial-users_2' }), fields: ['name'] },
      { name: 'an empty condition', body: newAudience({ condition: {} }), fields: ['condition'] },
      {
        name: 'a condition with two keys',
        body: newAudience({ condition: { trait: { key: 'plan', equals: 'pro' }, event: { name: 'Login' } } }),
        fields: ['condition'],
      },
      {
        name: 'a trait test with two operators',
        body: newAudience({ condition: { trait: { key: 'plan', equals: 'pro', gt: 3 } } }),
        fields: ['condition.trait'],
      },
      {
        name: 'a trait test without an operator',
        body: newAudience({ condition: { trait: { key: 'plan' } } }),
        fields: ['condition.trait'],
      },
      {
        name: 'a trait test with an unknown operator',
        body: newAudience({ condition: { trait: { key: 'plan', startsWith: 'p' } } }),
        fields: ['condition.trait.startsWith'],
      },
      {
        name: 'event atLeast 0',
        body: newAudience({ condition: { event: { name: 'Login', atLeast: 0 } } }),
        fields: ['condition.event.atLeast'],
      },
      {
        name: 'event withinDays 91',
        body: newAudience({ condition: { event: { name: 'Login', withinDays: 91 } } }),
        fields: ['condition.event.withinDays'],
      },
      {
        name: 'a bad event test inside all',
        body: newAudience({ condition: { all: [PRO, { event: { name: 'Login', atLeast: 0 } }] } }),
        fields: ['condition.all[1].event.atLeast'],
      },
      { name: 'not nested 11 levels deep', body: newAudience({ condition: nested('not', 10) }), fields: [`condition${'.not'.repeat(10)}`] },
      {
        name: 'all nested 11 levels deep',
        body: newAudience({ condition: nested('all', 10) }),
        fields: [`condition${'.all[0]'.repeat(10)}`],
      },
      {
        name: 'any nested 11 levels deep',
        body: newAudience({ condition: nested('any', 10) }),
        fields: [`condition${'.any[0]'.repeat(10)}`],
      },
    ];

    it.each(refusals)('refuses $name with 400 naming $fields; nothing written or audited', async ({ body, fields }) => {
      const started = await s.start('aud-refused');
      const existing = await started.admin.call('POST', '/audiences', {
        id: 'aud-existing',
        name: 'Trial Users 2',
        sourceIds: ['src-a'],
        destinationIds: ['dst-a'],
        condition: PRO,
      });
      expect(existing.status).toBe(201);
      const before = await s.everything(started);
      const res = await started.admin.call('POST', '/audiences', { id: 'aud-new', ...body });
      expectInvalid(res, fields);
      expect(await s.everything(started)).toEqual(before);
      expectNotFound(await started.admin.call('GET', '/audiences/aud-new'));
    });

    it('refuses a taken id with 409 conflict naming id; the first audience is untouched and nothing is audited', async () => {
      const started = await s.start('aud-conflict');
      const { admin } = started;
      const first = await admin.call('POST', '/audiences', newAudience({ id: 'taken' }));
      expect(first.status).toBe(201);
      const before = await s.everything(started);
      const res = await admin.call('POST', '/audiences', {
        id: 'taken',
        name: 'Impostor',
        sourceIds: ['src-b'],
        destinationIds: ['dst-b'],
        condition: { event: { name: 'Login' } },
      });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        success: false,
        code: 'conflict',
        message: expect.any(String),
        fields: [{ field: 'id', message: expect.any(String) }],
      });
      expect(await s.everything(started)).toEqual(before);
      expect((await admin.call('GET', '/audiences/taken')).body).toEqual(first.body);
    });
  });

  describe('GET and DELETE /audiences/:id', () => {
    it('answers 404 for an unknown id, and audits nothing', async () => {
      const started = await s.start('aud-404');
      await started.admin.call('POST', '/audiences', newAudience({ id: 'known' }));
      const before = await s.everything(started);
      expectNotFound(await started.admin.call('GET', '/audiences/unknown'));
      expectNotFound(await started.admin.call('DELETE', '/audiences/unknown'));
      expect(await s.everything(started)).toEqual(before);
    });

    it("DELETE answers 204, then the audience is gone with its members, outbox and state keys; another audience's keys stay", async () => {
      const { admin, prefix } = await s.start('aud-delete');
      const redis = s.redis();
      expect((await admin.call('POST', '/audiences', newAudience({ id: 'gone', name: 'Gone' }))).status).toBe(201);
      expect((await admin.call('POST', '/audiences', newAudience({ id: 'kept', name: 'Kept' }))).status).toBe(201);
      for (const id of ['gone', 'kept']) {
        await redis.sadd(`${prefix}:aud:${id}:members`, 'u1', 'u2');
        await redis.hset(`${prefix}:aud:${id}:outbox`, 'u3', 'join');
        await redis.hset(`${prefix}:aud:${id}:state`, { status: 'ready', scanned: '5' });
      }
      const keys = (id: string) => [`${prefix}:aud:${id}:members`, `${prefix}:aud:${id}:outbox`, `${prefix}:aud:${id}:state`];
      expect(await redis.exists(...keys('gone'))).toBe(3);
      expect((await admin.call('GET', '/audiences/gone')).body.membership.members).toBe(2);

      const deleted = await admin.call('DELETE', '/audiences/gone');
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      expectNotFound(await admin.call('GET', '/audiences/gone'));
      expect(await redis.exists(...keys('gone'))).toBe(0);
      expect(await redis.exists(...keys('kept'))).toBe(3);
      expect((await admin.call('GET', '/audiences')).body.map((a: { id: string }) => a.id)).toEqual(['kept']);
      expect((await admin.call('GET', '/config')).body.audiences.map((a: { id: string }) => a.id)).toEqual(['kept']);
      const [latest] = await auditItems(admin);
      expect(latest).toMatchObject({ action: 'audience.delete', targetId: 'gone' });
      expectNotFound(await admin.call('DELETE', '/audiences/gone'));
    });
  });

  describe('membership', () => {
    it('shows the stored pass of the current definition: status, members, profiles scanned and last full sync', async () => {
      const { admin, prefix } = await s.start('aud-ready');
      const redis = s.redis();
      const created = await admin.call('POST', '/audiences', newAudience({ id: 'ready-one', sourceIds: ['src-b', 'src-a'] }));
      expect(created.status).toBe(201);
      const audience = stored(created.body as Audience);
      const syncedAt = Date.parse('2026-02-01T10:20:30.456Z');
      await redis.hset(`${prefix}:aud:ready-one:state`, {
        fingerprint: audienceFingerprint(audience),
        status: 'ready',
        scanned: '42',
        lastFullSyncAt: String(syncedAt),
      });
      await redis.sadd(`${prefix}:aud:ready-one:members`, 'user-1', 'user-2', 'user-3');

      const got = await admin.call('GET', '/audiences/ready-one');
      expect(got.status).toBe(200);
      expect(got.body).toEqual({
        ...audience,
        traitKey: 'pro_users',
        membership: { status: 'ready', members: 3, profilesScanned: 42, lastFullSyncAt: '2026-02-01T10:20:30.456Z' },
      });
      expect((await admin.call('GET', '/audiences')).body).toEqual([got.body]);

      await redis.hset(`${prefix}:aud:ready-one:state`, 'status', 'backfilling');
      expect((await admin.call('GET', '/audiences/ready-one')).body.membership).toMatchObject({
        status: 'backfilling',
        members: 3,
        profilesScanned: 42,
      });
    });

    it('a pass of another definition (different fingerprint) leaves the audience pending, without its profile count', async () => {
      const { admin, prefix } = await s.start('aud-stale');
      const redis = s.redis();
      const created = await admin.call('POST', '/audiences', newAudience({ id: 'stale' }));
      const audience = stored(created.body as Audience);
      const other = audienceFingerprint({ sourceIds: audience.sourceIds, condition: { trait: { key: 'plan', equals: 'free' } } });
      expect(other).not.toBe(audienceFingerprint(audience));
      await redis.hset(`${prefix}:aud:stale:state`, {
        fingerprint: other,
        status: 'ready',
        scanned: '42',
        lastFullSyncAt: String(Date.now()),
      });
      await redis.sadd(`${prefix}:aud:stale:members`, 'user-1', 'user-2', 'user-3');

      const got = await admin.call('GET', '/audiences/stale');
      expect(got.status).toBe(200);
      expect(got.body.membership.status).toBe('pending');
      expect(got.body.membership.members).toBe(3);
      expect(got.body.membership).not.toHaveProperty('profilesScanned');
    });

    it('GET /audiences gives each audience its own membership', async () => {
      const { admin, prefix } = await s.start('aud-list-members');
      const redis = s.redis();
      const views: Audience[] = [];
      for (const id of ['m-c', 'm-a', 'm-b']) {
        const res = await admin.call('POST', '/audiences', newAudience({ id, name: `Name ${id}` }));
        expect(res.status).toBe(201);
        views.push(stored(res.body as Audience));
      }
      await redis.sadd(`${prefix}:aud:m-a:members`, 'u1');
      await redis.sadd(`${prefix}:aud:m-c:members`, 'u1', 'u2', 'u3', 'u4');
      await redis.hset(`${prefix}:aud:m-c:state`, {
        fingerprint: audienceFingerprint(views[0]!),
        status: 'ready',
        scanned: '7',
        lastFullSyncAt: '1700000000000',
      });
      const list = await admin.call('GET', '/audiences');
      expect(list.body.map((a: { id: string; membership: unknown }) => [a.id, a.membership])).toEqual([
        ['m-a', { status: 'pending', members: 1 }],
        ['m-b', { status: 'pending', members: 0 }],
        ['m-c', { status: 'ready', members: 4, profilesScanned: 7, lastFullSyncAt: new Date(1700000000000).toISOString() }],
      ]);
    });
  });

  describe('deleting what an audience names', () => {
    it("deleting a destination removes it from every audience's destinationIds", async () => {
      const { admin } = await s.start('aud-del-dst');
      await admin.call('POST', '/audiences', newAudience({ id: 'both', name: 'Both', destinationIds: ['dst-a', 'dst-b'] }));
      await admin.call('POST', '/audiences', newAudience({ id: 'only-a', name: 'Only A', destinationIds: ['dst-a'] }));
      await admin.call('POST', '/audiences', newAudience({ id: 'only-b', name: 'Only B', destinationIds: ['dst-b'] }));
      expect((await admin.call('DELETE', '/destinations/dst-a')).status).toBe(204);
      const list = await admin.call('GET', '/audiences');
      expect(list.body.map((a: { id: string; destinationIds: string[] }) => [a.id, a.destinationIds])).toEqual([
        ['both', ['dst-b']],
        ['only-a', []],
        ['only-b', ['dst-b']],
      ]);
      expect((await admin.call('GET', '/config')).body.audiences.map((a: Audience) => a.destinationIds)).toEqual([
        ['dst-b'],
        [],
        ['dst-b'],
      ]);
    });

    it("deleting a source removes it from every audience's sourceIds, and the changed definition is pending again", async () => {
      const { admin, prefix } = await s.start('aud-del-src');
      const created = await admin.call(
        'POST',
        '/audiences',
        newAudience({ id: 'two-sources', name: 'Two sources', sourceIds: ['src-a', 'src-b'] }),
      );
      await admin.call('POST', '/audiences', newAudience({ id: 'b-only', name: 'B only', sourceIds: ['src-b'] }));
      await s.redis().hset(`${prefix}:aud:two-sources:state`, {
        fingerprint: audienceFingerprint(stored(created.body as Audience)),
        status: 'ready',
        scanned: '3',
      });
      expect((await admin.call('GET', '/audiences/two-sources')).body.membership.status).toBe('ready');

      expect((await admin.call('DELETE', '/sources/src-a')).status).toBe(204);
      const got = await admin.call('GET', '/audiences/two-sources');
      expect(got.body.sourceIds).toEqual(['src-b']);
      expect(got.body.membership.status).toBe('pending');
      expect((await admin.call('GET', '/audiences/b-only')).body.sourceIds).toEqual(['src-b']);
    });

    it('deleting the only source of an audience leaves a config that GET /config exports and can be applied again', async () => {
      const { admin } = await s.start('aud-del-last-src');
      expect((await admin.call('POST', '/audiences', newAudience({ id: 'a-only', name: 'A only', sourceIds: ['src-a'] }))).status).toBe(
        201,
      );
      expect((await admin.call('DELETE', '/sources/src-a')).status).toBe(204);
      const exported = await admin.call('GET', '/config');
      expect(exported.status).toBe(200);
      expect(exported.body.sources.map((x: { id: string }) => x.id)).toEqual(['src-b']);
      // planDeleteSource leaves the audience with sourceIds [] (no reference dangles): the config
      // file schema must take that, or the export could not be applied again.
      expect(exported.body.audiences).toEqual([{ id: 'a-only', name: 'A only', sourceIds: [], destinationIds: ['dst-a'], condition: PRO }]);
      expect(() => checkConfig(exported.body, 'GET /admin/v1/config')).not.toThrow();
    });
  });
});

describe('admin API: regulations', () => {
  const s = scope();
  const SUBJECTS = ['subject-alice-7f3e', 'subject-bob-19c2', 'subject-carol-55aa'];

  it('POST answers 202 with the pending record, queues the job under the regulation id, and never shows or audits the subject ids', async () => {
    const { admin, prefix } = await s.start('reg-create', { clock: () => FIXED_NOW });
    const queue = s.regulationQueue(prefix);
    const request = { regulationType: 'SUPPRESS_WITH_DELETE', subjectType: 'USER_ID', subjectIds: SUBJECTS, sourceIds: ['src-b', 'src-a'] };
    const res = await admin.call('POST', '/regulations', request);
    expect(res.status).toBe(202);
    const createdAt = new Date(FIXED_NOW).toISOString();
    expect(res.body).toEqual({
      id: expect.stringMatching(/^reg_[0-9a-f]{16}$/),
      regulationType: 'SUPPRESS_WITH_DELETE',
      subjectType: 'USER_ID',
      subjectCount: 3,
      sourceIds: ['src-b', 'src-a'],
      status: 'pending',
      createdAt,
      counts: { subjectsDone: 0, deleteNotices: 0, profilesErased: 0 },
      receipts: { notices: 0, delivered: 0, deadLettered: 0, dropped: 0, pending: 0, destinations: [] },
    });
    const id = res.body.id as string;

    const job = await queue.getJob(id);
    expect(job).toBeDefined();
    expect(job!.id).toBe(id);
    expect(job!.name).toBe(queueCatalog.regulation.jobName);
    expect(job!.data).toEqual({ id, createdAt, request });
    expect(await queue.getJobCounts('wait', 'delayed', 'active', 'prioritized')).toEqual({
      wait: 1,
      delayed: 0,
      active: 0,
      prioritized: 0,
    });

    const got = await admin.call('GET', `/regulations/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);

    const [latest] = await auditItems(admin);
    expect(latest).toEqual({
      action: 'regulation.create',
      targetId: id,
      tokenId: expect.stringMatching(/^tok_/),
      at: createdAt,
      details: { regulationType: 'SUPPRESS_WITH_DELETE', subjects: 3, sourceIds: ['src-b', 'src-a'] },
    });
    const audit = await admin.call('GET', '/audit?limit=1000');
    const record = (await s.redis().hget(`${prefix}:reg:regulations`, id)) ?? '';
    expect(record).not.toBe('');
    for (const subject of SUBJECTS) {
      expect(res.text).not.toContain(subject);
      expect(got.text).not.toContain(subject);
      expect(audit.text).not.toContain(subject);
      expect(record).not.toContain(subject);
    }
  });

  it('without sourceIds the record has none; each regulation gets its own id and job; 5000 subjects are accepted', async () => {
    const { admin, prefix } = await s.start('reg-every-source');
    const queue = s.regulationQueue(prefix);
    const suppress = await admin.call('POST', '/regulations', { regulationType: 'SUPPRESS', subjectType: 'USER_ID', subjectIds: ['u-1'] });
    expect(suppress.status).toBe(202);
    expect(suppress.body).toEqual({
      id: expect.stringMatching(/^reg_/),
      regulationType: 'SUPPRESS',
      subjectType: 'USER_ID',
      subjectCount: 1,
      status: 'pending',
      createdAt: expect.any(String),
      counts: { subjectsDone: 0, deleteNotices: 0, profilesErased: 0 },
    });
    expect(new Date(suppress.body.createdAt as string).toISOString()).toBe(suppress.body.createdAt);
    expect(suppress.body).not.toHaveProperty('sourceIds');

    const many = Array.from({ length: 5000 }, (_, i) => `user-${i}`);
    const big = await admin.call('POST', '/regulations', { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: many });
    expect(big.status).toBe(202);
    expect(big.body.subjectCount).toBe(5000);
    expect(big.body.id).not.toBe(suppress.body.id);
    expect(big.text).not.toContain('user-4999');

    expect((await queue.getJob(suppress.body.id as string))!.data.request).toEqual({
      regulationType: 'SUPPRESS',
      subjectType: 'USER_ID',
      subjectIds: ['u-1'],
    });
    expect((await queue.getJob(big.body.id as string))!.data.request.subjectIds).toEqual(many);
    expect((await admin.call('GET', `/regulations/${big.body.id as string}`)).body).toEqual(big.body);
    const [latest] = await auditItems(admin);
    expect(latest).toMatchObject({
      action: 'regulation.create',
      targetId: big.body.id,
      details: { regulationType: 'DELETE', subjects: 5000 },
    });
    expect(latest!.details).not.toHaveProperty('sourceIds');
  });

  const refusals: { name: string; body: Record<string, unknown>; fields: string[] }[] = [
    { name: 'empty subjectIds', body: { subjectIds: [] }, fields: ['subjectIds'] },
    { name: '5001 subjectIds', body: { subjectIds: Array.from({ length: 5001 }, (_, i) => `user-${i}`) }, fields: ['subjectIds'] },
    { name: 'duplicate subjectIds', body: { subjectIds: ['user-1', 'user-2', 'user-1'] }, fields: ['subjectIds'] },
    { name: 'an empty subject id', body: { subjectIds: ['user-1', ''] }, fields: ['subjectIds[1]'] },
    { name: 'subjectType EMAIL', body: { subjectType: 'EMAIL' }, fields: ['subjectType'] },
    { name: 'regulationType ERASE', body: { regulationType: 'ERASE' }, fields: ['regulationType'] },
    { name: 'an unknown source', body: { sourceIds: ['src-a', 'ghost'] }, fields: ['sourceIds[1]'] },
    { name: 'empty sourceIds', body: { sourceIds: [] }, fields: ['sourceIds'] },
    { name: 'no subjectIds', body: { subjectIds: undefined }, fields: ['subjectIds'] },
  ];

  it.each(refusals)('refuses $name with 400 naming $fields; no job, no record, nothing audited', async ({ body, fields }) => {
    const started = await s.start('reg-refused');
    const queue = s.regulationQueue(started.prefix);
    const before = await s.everything(started);
    const res = await started.admin.call('POST', '/regulations', {
      regulationType: 'DELETE',
      subjectType: 'USER_ID',
      subjectIds: ['user-1'],
      ...body,
    });
    expectInvalid(res, fields);
    expect(await s.everything(started)).toEqual(before);
    expect(await queue.getJobCounts('wait', 'delayed', 'active', 'prioritized', 'completed', 'failed')).toEqual({
      wait: 0,
      delayed: 0,
      active: 0,
      prioritized: 0,
      completed: 0,
      failed: 0,
    });
    // The queue's own meta key aside, no key of the queue exists: no job was ever added.
    expect((await s.redis().keys(`${started.prefix}:regulation:*`)).filter((k) => !k.endsWith(':regulation:meta'))).toEqual([]);
  });

  it('GET /regulations/:id shows a deletion’s receipts per destination, as the audiences service and webhook-delivery record them', async () => {
    const { admin, prefix } = await s.start('reg-receipts');
    const created = await admin.call('POST', '/regulations', { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: SUBJECTS });
    expect(created.status).toBe(202);
    const id = created.body.id as string;
    // As they would be recorded: 3 notices to dst-a (2 delivered, 1 dead-lettered), 3 to dst-b (1 dropped).
    const receipts = new DeletionReceipts(s.redis(), prefix);
    const notices = (destinationId: string) => [1, 2, 3].map((i) => ({ destinationId, messageId: `del-${id}-${i}` }));
    await receipts.plan(id, [...notices('dst-b'), ...notices('dst-a')]);
    await receipts.settle(id, 'delivered', notices('dst-a').slice(0, 2));
    await receipts.settle(id, 'deadLettered', notices('dst-a').slice(2));
    await receipts.settle(id, 'dropped', notices('dst-b').slice(0, 1));
    const got = await admin.call('GET', `/regulations/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      ...created.body,
      receipts: {
        notices: 6,
        delivered: 2,
        deadLettered: 1,
        dropped: 1,
        pending: 2,
        destinations: [
          { destinationId: 'dst-a', notices: 3, delivered: 2, deadLettered: 1, dropped: 0, pending: 0 },
          { destinationId: 'dst-b', notices: 3, delivered: 0, deadLettered: 0, dropped: 1, pending: 2 },
        ],
      },
    });
    for (const subject of SUBJECTS) expect(got.text).not.toContain(subject);
    // A SUPPRESS has no notices, so no receipts.
    const suppress = await admin.call('POST', '/regulations', { regulationType: 'SUPPRESS', subjectType: 'USER_ID', subjectIds: ['u-1'] });
    expect((await admin.call('GET', `/regulations/${suppress.body.id as string}`)).body).not.toHaveProperty('receipts');
  });

  it('GET /regulations/:id answers 404 for an unknown id', async () => {
    const { admin } = await s.start('reg-404');
    expectNotFound(await admin.call('GET', '/regulations/reg_0000000000000000'));
    const created = await admin.call('POST', '/regulations', { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['user-1'] });
    expect(created.status).toBe(202);
    expect((await admin.call('GET', `/regulations/${created.body.id as string}`)).status).toBe(200);
    expectNotFound(await admin.call('GET', '/regulations/reg_0000000000000000'));
  });
});
