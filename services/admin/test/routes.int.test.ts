/**
 * Every admin route (docs/spec.md §6) over real HTTP against real Redis: authentication, sources,
 * destinations, the write-only shared secret, unknown ids and methods, the config export and the
 * audit log.
 */
import { Redis } from 'ioredis';
import { checkConfig, type Destination } from '@eventrelay/config';
import { ConfigStore } from '@eventrelay/stores';
import webhookSettingsSchema from '../../../packages/config/schemas/webhook-settings.schema.json';
import { ADMIN_TEST_TOKEN, startTestAdmin, type AdminAnswer, type TestAdmin } from '../../../test/support/admin';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';
import { tokenId } from '../src/domain/tokens';

const SECRET = 'whsec_abcdefghijklmnop1234';
const FIRST_SECRET = 'whsec_first0secret0value9876';
const WRITE_KEY = /^[A-Za-z0-9_-]+$/;

/** Admins started by a test, each on a prefix of its own unless told otherwise; all closed and wiped after it. */
function adminScope() {
  const opened: TestAdmin[] = [];
  const prefixes: string[] = [];
  afterEach(async () => {
    for (const admin of opened.splice(0).reverse()) await admin.close();
    for (const prefix of prefixes.splice(0)) await deletePrefix(SHARED_REDIS_URL, prefix);
  });
  const on = async (prefix: string, env?: Record<string, string>): Promise<TestAdmin> => {
    if (!prefixes.includes(prefix)) prefixes.push(prefix);
    const admin = await startTestAdmin({ prefix, ...(env ? { env } : {}) });
    opened.push(admin);
    return admin;
  };
  return {
    on,
    start: (label: string, env?: Record<string, string>) => on(uniquePrefix(label), env),
  };
}

function hooks(...urls: string[]): { url: string; headers: Record<string, string> }[] {
  return urls.map((url, i) => ({ url, headers: { 'X-Team': `team-${i}`, Authorization: `Bearer receiver-token-${i}` } }));
}

/** Webhooks as reads show them: each header value write-only, a hint with the last 4 of 8 or more. */
function hinted(webhooks: { url: string; headers?: Record<string, string> }[]) {
  const hint = (v: string) => (v.length >= 8 ? { set: true, last4: v.slice(-4) } : { set: true });
  return webhooks.map((w) => ({
    ...w,
    ...(w.headers ? { headers: Object.fromEntries(Object.entries(w.headers).map(([k, v]) => [k, hint(v)])) } : {}),
  }));
}

/** The same webhooks without their headers, as `GET /config` exports them. */
function withoutHeaders(webhooks: { url: string }[]) {
  return webhooks.map((w) => ({ url: w.url }));
}

async function auditActions(
  admin: TestAdmin,
): Promise<{ action: string; targetId: string; tokenId: string; at: string; details?: Record<string, unknown> }[]> {
  const page = await admin.call('GET', '/audit?limit=1000');
  expect(page.status).toBe(200);
  return page.body.items;
}

describe('admin API routes', () => {
  const admins = adminScope();
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    await redis.quit();
  });

  describe('authentication', () => {
    it('answers 401 unauthorized on every route but GET /openapi.json without a token, with a wrong one and with the Basic scheme', async () => {
      const admin = await admins.start('auth');
      const doc = await admin.call('GET', '/openapi.json', undefined, { token: null });
      expect(doc.status).toBe(200);
      const operations: [string, string][] = [];
      for (const [path, methods] of Object.entries(doc.body.paths as Record<string, Record<string, unknown>>)) {
        for (const method of Object.keys(methods)) operations.push([method.toUpperCase(), path]);
      }
      // The document lists the whole route table, so the loop below covers every route.
      expect(operations.map(([m, p]) => `${m} ${p}`).sort()).toEqual(
        [
          'GET /admin/v1/openapi.json',
          'GET /admin/v1/catalog',
          'GET /admin/v1/config',
          'GET /admin/v1/stats',
          'GET /admin/v1/sources',
          'POST /admin/v1/sources',
          'GET /admin/v1/sources/{id}',
          'PATCH /admin/v1/sources/{id}',
          'DELETE /admin/v1/sources/{id}',
          'POST /admin/v1/sources/{id}/rotate-write-key',
          'GET /admin/v1/sources/{id}/events',
          'GET /admin/v1/destinations',
          'POST /admin/v1/destinations',
          'POST /admin/v1/destinations/preview',
          'POST /admin/v1/destinations/{id}/preview',
          'GET /admin/v1/destinations/{id}',
          'PATCH /admin/v1/destinations/{id}',
          'DELETE /admin/v1/destinations/{id}',
          'POST /admin/v1/destinations/{id}/rotate-secret',
          'GET /admin/v1/destinations/{id}/deliveries',
          'GET /admin/v1/destinations/{id}/dead-letters',
          'POST /admin/v1/destinations/{id}/replay',
          'GET /admin/v1/destinations/{id}/replays/{replayId}',
          'POST /admin/v1/destinations/{id}/test-send',
          'GET /admin/v1/info',
          'GET /admin/v1/audiences',
          'POST /admin/v1/audiences',
          'GET /admin/v1/audiences/{id}',
          'DELETE /admin/v1/audiences/{id}',
          'POST /admin/v1/regulations',
          'GET /admin/v1/regulations/{id}',
          'GET /admin/v1/audit',
        ].sort(),
      );
      // A real source and destination, so a request that got past authentication would succeed.
      const source = await admin.call('POST', '/sources', { id: 'src-auth', name: 'Auth', type: 'web' });
      const destination = await admin.call('POST', '/destinations', {
        id: 'dst-auth',
        name: 'Webhooks',
        enabled: true,
        settings: { webhooks: hooks('https://hooks.example.com/a') },
      });
      expect([source.status, destination.status]).toEqual([201, 201]);

      const basic = `Basic ${Buffer.from(`${ADMIN_TEST_TOKEN}:`).toString('base64')}`;
      const variants: { name: string; authorization?: string }[] = [
        { name: 'no header' },
        { name: 'wrong token', authorization: 'Bearer not-the-admin-token-0000000' },
        { name: 'token of another length', authorization: `Bearer ${ADMIN_TEST_TOKEN}x` },
        { name: 'Basic scheme', authorization: basic },
        { name: 'Basic scheme with the raw token', authorization: `Basic ${ADMIN_TEST_TOKEN}` },
        { name: 'token without a scheme', authorization: ADMIN_TEST_TOKEN },
      ];
      let checked = 0;
      for (const [method, path] of operations) {
        if (path === '/admin/v1/openapi.json') continue;
        const isSource = path.startsWith('/admin/v1/sources/');
        const url = `${admin.url}${path.replace('{id}', isSource ? 'src-auth' : 'dst-auth').replace('{replayId}', 'rpl_x')}`;
        const body = method === 'POST' || method === 'PATCH' ? JSON.stringify({ name: 'Changed' }) : undefined;
        for (const variant of variants) {
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (variant.authorization !== undefined) headers['authorization'] = variant.authorization;
          const res = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }) });
          const text = await res.text();
          expect({ operation: `${method} ${path}`, variant: variant.name, status: res.status }).toEqual({
            operation: `${method} ${path}`,
            variant: variant.name,
            status: 401,
          });
          expect(JSON.parse(text)).toEqual({ success: false, code: 'unauthorized', message: expect.any(String) });
          checked++;
        }
      }
      expect(checked).toBe(31 * variants.length);
      // Nothing was written by any of them.
      expect((await admin.call('GET', '/sources/src-auth')).body.name).toBe('Auth');
      expect((await admin.call('GET', '/destinations/dst-auth')).status).toBe(200);
      expect((await auditActions(admin)).map((e) => e.action)).toEqual(['destination.create', 'source.create']);
    });

    it('a 401 answer says how to authenticate (WWW-Authenticate: Bearer, RFC 9110 section 11.6.1)', async () => {
      const admin = await admins.start('www-auth');
      const res = await admin.call('GET', '/sources', undefined, { token: null });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/i);
    });

    it('serves GET /openapi.json without a token', async () => {
      const admin = await admins.start('openapi');
      const res = await admin.call('GET', '/openapi.json', undefined, { token: null });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ openapi: '3.1.0', info: { title: 'eventrelay admin API' } });
    });

    it('takes the token with any case of "Bearer"', async () => {
      const admin = await admins.start('bearer-case');
      const res = await fetch(`${admin.url}/admin/v1/sources`, { headers: { authorization: `bearer ${ADMIN_TEST_TOKEN}` } });
      expect(res.status).toBe(200);
    });
  });

  describe('GET /catalog', () => {
    it('lists the Webhooks type with its settings schema (at most 5 webhooks)', async () => {
      const admin = await admins.start('catalog');
      const res = await admin.call('GET', '/catalog');
      expect(res.status).toBe(200);
      expect(res.body).toEqual([{ name: 'Webhooks', description: expect.any(String), settingsSchema: expect.any(Object) }]);
      expect(res.body[0].description.length).toBeGreaterThan(0);
      expect(res.body[0].settingsSchema.properties.webhooks.maxItems).toBe(5);
      expect(res.body[0].settingsSchema.properties.webhooks.minItems).toBe(1);
      expect(res.body[0].settingsSchema).toEqual(webhookSettingsSchema);
    });
  });

  describe('sources', () => {
    it('creates a source with a generated id and a generated write key, different each time', async () => {
      const admin = await admins.start('src-create');
      const first = await admin.call('POST', '/sources', { name: 'Website', type: 'web' });
      const second = await admin.call('POST', '/sources', { name: 'Backend', type: 'server', rateLimitPerSecond: 25 });
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(first.body).toEqual({
        id: expect.stringMatching(/^src_[0-9a-f]{16}$/),
        name: 'Website',
        type: 'web',
        writeKey: expect.stringMatching(WRITE_KEY),
      });
      expect(second.body).toEqual({
        id: expect.stringMatching(/^src_[0-9a-f]{16}$/),
        name: 'Backend',
        type: 'server',
        rateLimitPerSecond: 25,
        writeKey: expect.stringMatching(WRITE_KEY),
      });
      expect(first.body.writeKey.length).toBeGreaterThanOrEqual(40);
      expect(second.body.writeKey.length).toBeGreaterThanOrEqual(40);
      expect(first.body.writeKey).not.toBe(second.body.writeKey);
      expect(first.body.id).not.toBe(second.body.id);
      // What was answered is what is stored.
      expect((await admin.call('GET', `/sources/${first.body.id}`)).body).toEqual(first.body);
      expect((await admin.call('GET', `/sources/${second.body.id}`)).body).toEqual(second.body);
    });

    it('creates a source with a given id, and refuses a taken id with 409 conflict naming the id', async () => {
      const admin = await admins.start('src-given');
      const created = await admin.call('POST', '/sources', { id: 'mobile-app', name: 'Mobile', type: 'mobile' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ id: 'mobile-app', name: 'Mobile', type: 'mobile', writeKey: expect.stringMatching(WRITE_KEY) });

      const taken = await admin.call('POST', '/sources', { id: 'mobile-app', name: 'Other', type: 'web' });
      expect(taken.status).toBe(409);
      expect(taken.body).toEqual({
        success: false,
        code: 'conflict',
        message: expect.any(String),
        fields: [{ field: 'id', message: expect.any(String) }],
      });
      // The first one is untouched, write key included.
      expect((await admin.call('GET', '/sources/mobile-app')).body).toEqual(created.body);
      expect((await admin.call('GET', '/sources')).body).toHaveLength(1);
    });

    it('lists sources sorted by id', async () => {
      const admin = await admins.start('src-list');
      for (const id of ['charlie', 'alpha', 'delta', 'bravo'])
        expect((await admin.call('POST', '/sources', { id, name: id, type: 'web' })).status).toBe(201);
      const list = await admin.call('GET', '/sources');
      expect(list.status).toBe(200);
      expect(list.body.map((s: { id: string }) => s.id)).toEqual(['alpha', 'bravo', 'charlie', 'delta']);
      expect(list.body[0]).toEqual({ id: 'alpha', name: 'alpha', type: 'web', writeKey: expect.stringMatching(WRITE_KEY) });
    });

    it('gets one source', async () => {
      const admin = await admins.start('src-get');
      const created = await admin.call('POST', '/sources', { id: 'one', name: 'One', type: 'server' });
      const got = await admin.call('GET', '/sources/one');
      expect(got.status).toBe(200);
      expect(got.body).toEqual(created.body);
    });

    it('PATCH renames, changes the type and the rate limit; rateLimitPerSecond null removes it', async () => {
      const admin = await admins.start('src-patch');
      const created = await admin.call('POST', '/sources', { id: 'p1', name: 'Before', type: 'web' });
      const { writeKey } = created.body as { writeKey: string };

      const patched = await admin.call('PATCH', '/sources/p1', { name: 'After', type: 'server', rateLimitPerSecond: 50 });
      expect(patched.status).toBe(200);
      expect(patched.body).toEqual({ id: 'p1', name: 'After', type: 'server', writeKey, rateLimitPerSecond: 50 });
      expect((await admin.call('GET', '/sources/p1')).body).toEqual(patched.body);

      const renamedOnly = await admin.call('PATCH', '/sources/p1', { name: 'Renamed' });
      expect(renamedOnly.body).toEqual({ id: 'p1', name: 'Renamed', type: 'server', writeKey, rateLimitPerSecond: 50 });

      const unlimited = await admin.call('PATCH', '/sources/p1', { rateLimitPerSecond: null });
      expect(unlimited.status).toBe(200);
      expect(unlimited.body).toEqual({ id: 'p1', name: 'Renamed', type: 'server', writeKey });
      const stored = await admin.call('GET', '/sources/p1');
      expect(stored.body).toEqual({ id: 'p1', name: 'Renamed', type: 'server', writeKey });
      expect(stored.body).not.toHaveProperty('rateLimitPerSecond');
    });

    it.each([
      { field: 'writeKey', patch: { writeKey: 'wk_chosenByTheCaller000000000000000000000' } },
      { field: 'id', patch: { id: 'another-id' } },
      { field: 'writeKey', patch: { name: 'Also renamed', writeKey: 'wk_chosenByTheCaller000000000000000000000' } },
    ])('PATCH cannot change $field: 400 naming it, nothing changed', async ({ field, patch }) => {
      const admin = await admins.start('src-patch-ro');
      const created = await admin.call('POST', '/sources', { id: 'ro', name: 'Read only', type: 'web' });
      const res = await admin.call('PATCH', '/sources/ro', patch);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.fields).toHaveLength(1);
      expect(res.body.fields[0]).toEqual({ field, message: 'is not a known field' });
      expect((await admin.call('GET', '/sources/ro')).body).toEqual(created.body);
      expect((await admin.call('GET', '/sources/another-id')).status).toBe(404);
    });

    it('DELETE answers 204 with no body, then the source is gone', async () => {
      const admin = await admins.start('src-delete');
      await admin.call('POST', '/sources', { id: 'gone', name: 'Gone', type: 'web' });
      await admin.call('POST', '/sources', { id: 'kept', name: 'Kept', type: 'web' });
      const deleted = await admin.call('DELETE', '/sources/gone');
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      const got = await admin.call('GET', '/sources/gone');
      expect(got.status).toBe(404);
      expect(got.body.code).toBe('not_found');
      expect((await admin.call('GET', '/sources')).body.map((s: { id: string }) => s.id)).toEqual(['kept']);
      expect((await admin.call('DELETE', '/sources/gone')).status).toBe(404);
    });

    it('rotate-write-key gives a new key that GET then shows; the old key no longer maps to the source', async () => {
      const prefix = uniquePrefix('src-rotate');
      const admin = await admins.on(prefix);
      const created = await admin.call('POST', '/sources', { id: 'rot', name: 'Rotating', type: 'web', rateLimitPerSecond: 7 });
      const oldKey = created.body.writeKey as string;
      const rotated = await admin.call('POST', '/sources/rot/rotate-write-key');
      expect(rotated.status).toBe(200);
      expect(rotated.body).toEqual({
        id: 'rot',
        name: 'Rotating',
        type: 'web',
        rateLimitPerSecond: 7,
        writeKey: expect.stringMatching(WRITE_KEY),
      });
      expect(rotated.body.writeKey).not.toBe(oldKey);
      expect(rotated.body.writeKey.length).toBeGreaterThanOrEqual(40);
      expect((await admin.call('GET', '/sources/rot')).body.writeKey).toBe(rotated.body.writeKey);
      // What the intake looks keys up by.
      const store = new ConfigStore(redis, prefix);
      expect(await store.sourceByWriteKey(oldKey)).toBeUndefined();
      expect((await store.sourceByWriteKey(rotated.body.writeKey as string))?.id).toBe('rot');
    });

    it("deleting a source removes it from every destination's sourceIds", async () => {
      const admin = await admins.start('src-detach');
      for (const id of ['s1', 's2', 's3']) await admin.call('POST', '/sources', { id, name: id, type: 'web' });
      await admin.call('POST', '/destinations', {
        id: 'd1',
        name: 'Webhooks',
        sourceIds: ['s1', 's2', 's3'],
        settings: { webhooks: hooks('https://a.example.com/h') },
      });
      await admin.call('POST', '/destinations', {
        id: 'd2',
        name: 'Webhooks',
        sourceIds: ['s2'],
        settings: { webhooks: hooks('https://b.example.com/h') },
      });
      await admin.call('POST', '/destinations', {
        id: 'd3',
        name: 'Webhooks',
        sourceIds: ['s3'],
        settings: { webhooks: hooks('https://c.example.com/h') },
      });

      expect((await admin.call('DELETE', '/sources/s2')).status).toBe(204);
      expect((await admin.call('GET', '/destinations/d1')).body.sourceIds).toEqual(['s1', 's3']);
      expect((await admin.call('GET', '/destinations/d2')).body.sourceIds).toEqual([]);
      expect((await admin.call('GET', '/destinations/d3')).body.sourceIds).toEqual(['s3']);
      const [entry] = await auditActions(admin);
      expect(entry).toMatchObject({ action: 'source.delete', targetId: 's2', details: { detachedFrom: ['d1', 'd2'] } });
    });
  });

  describe('destinations', () => {
    it('creates a destination: disabled and without sources unless given, with a generated id', async () => {
      const admin = await admins.start('dst-create');
      const webhooks = hooks('https://hooks.example.com/one', 'http://127.0.0.1:9/two');
      const created = await admin.call('POST', '/destinations', { name: 'Webhooks', settings: { webhooks } });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^dst_[0-9a-f]{16}$/),
        name: 'Webhooks',
        enabled: false,
        sourceIds: [],
        settings: { webhooks: hinted(webhooks), sharedSecret: { set: false } },
      });
      expect(created.text).not.toContain('receiver-token');

      await admin.call('POST', '/sources', { id: 'web', name: 'Web', type: 'web' });
      const given = await admin.call('POST', '/destinations', {
        id: 'dst-on',
        name: 'Webhooks',
        enabled: true,
        sourceIds: ['web'],
        settings: { webhooks: [{ url: 'https://x.example.com/' }] },
      });
      expect(given.status).toBe(201);
      expect(given.body).toEqual({
        id: 'dst-on',
        name: 'Webhooks',
        enabled: true,
        sourceIds: ['web'],
        settings: { webhooks: [{ url: 'https://x.example.com/' }], sharedSecret: { set: false } },
      });

      const again = await admin.call('POST', '/destinations', { id: 'dst-on', name: 'Webhooks', settings: { webhooks } });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({
        success: false,
        code: 'conflict',
        message: expect.any(String),
        fields: [{ field: 'id', message: expect.any(String) }],
      });
    });

    it('gets one destination and lists them by id', async () => {
      const admin = await admins.start('dst-read');
      const b = await admin.call('POST', '/destinations', {
        id: 'b-dst',
        name: 'Webhooks',
        settings: { webhooks: hooks('https://b.example.com/') },
      });
      const a = await admin.call('POST', '/destinations', {
        id: 'a-dst',
        name: 'Webhooks',
        enabled: true,
        settings: { webhooks: hooks('https://a.example.com/'), sharedSecret: SECRET },
      });
      const got = await admin.call('GET', '/destinations/b-dst');
      expect(got.status).toBe(200);
      expect(got.body).toEqual(b.body);
      const list = await admin.call('GET', '/destinations');
      expect(list.status).toBe(200);
      expect(list.body).toEqual([a.body, b.body]);
    });

    it('PATCH changes enabled, sourceIds and webhooks (as a whole list)', async () => {
      const admin = await admins.start('dst-patch');
      for (const id of ['s1', 's2']) await admin.call('POST', '/sources', { id, name: id, type: 'web' });
      await admin.call('POST', '/destinations', {
        id: 'd',
        name: 'Webhooks',
        sourceIds: ['s1'],
        settings: { webhooks: hooks('https://one.example.com/', 'https://two.example.com/', 'https://three.example.com/') },
      });

      const enabled = await admin.call('PATCH', '/destinations/d', { enabled: true });
      expect(enabled.status).toBe(200);
      expect(enabled.body.enabled).toBe(true);
      expect(enabled.body.sourceIds).toEqual(['s1']);
      expect(enabled.body.settings.webhooks).toHaveLength(3);

      const sources = await admin.call('PATCH', '/destinations/d', { sourceIds: ['s2', 's1'] });
      expect(sources.body.sourceIds).toEqual(['s2', 's1']);
      expect(sources.body.enabled).toBe(true);

      const replacement = [{ url: 'https://new.example.com/only', headers: { 'X-New': 'yes' } }];
      const webhooks = await admin.call('PATCH', '/destinations/d', { settings: { webhooks: replacement } });
      expect(webhooks.status).toBe(200);
      // Replaced whole: neither the old URLs nor the old headers survive.
      expect(webhooks.body.settings.webhooks).toEqual([{ url: 'https://new.example.com/only', headers: { 'X-New': { set: true } } }]);

      const disabled = await admin.call('PATCH', '/destinations/d', { enabled: false, sourceIds: [] });
      expect(disabled.body).toEqual({
        id: 'd',
        name: 'Webhooks',
        enabled: false,
        sourceIds: [],
        settings: { webhooks: hinted(replacement), sharedSecret: { set: false } },
      });
      expect((await admin.call('GET', '/destinations/d')).body).toEqual(disabled.body);
    });

    it('PATCH keeps the shared secret when left out, removes it on null and replaces it with a string', async () => {
      const prefix = uniquePrefix('dst-secret');
      const admin = await admins.on(prefix);
      const store = new ConfigStore(redis, prefix);
      const stored = async (): Promise<Destination> => (await store.snapshot()).destinations.get('d')!;
      await admin.call('POST', '/destinations', {
        id: 'd',
        name: 'Webhooks',
        settings: { webhooks: hooks('https://a.example.com/'), sharedSecret: FIRST_SECRET },
      });
      expect((await stored()).settings.sharedSecret).toBe(FIRST_SECRET);

      const kept = await admin.call('PATCH', '/destinations/d', { enabled: true, settings: { webhooks: hooks('https://b.example.com/') } });
      expect(kept.status).toBe(200);
      expect(kept.body.settings.sharedSecret).toEqual({ set: true, last4: '9876' });
      expect((await stored()).settings.sharedSecret).toBe(FIRST_SECRET);

      const replaced = await admin.call('PATCH', '/destinations/d', { settings: { sharedSecret: SECRET } });
      expect(replaced.body.settings).toEqual({
        webhooks: hinted(hooks('https://b.example.com/')),
        sharedSecret: { set: true, last4: '1234' },
      });
      expect((await stored()).settings.sharedSecret).toBe(SECRET);

      const removed = await admin.call('PATCH', '/destinations/d', { settings: { sharedSecret: null } });
      expect(removed.status).toBe(200);
      expect(removed.body.settings).toEqual({ webhooks: hinted(hooks('https://b.example.com/')), sharedSecret: { set: false } });
      expect((await stored()).settings).not.toHaveProperty('sharedSecret');
      expect((await admin.call('GET', '/destinations/d')).body.settings.sharedSecret).toEqual({ set: false });
    });

    it('header values are write-only: reads show hints, a PATCH of what was read keeps them, a string replaces one', async () => {
      const prefix = uniquePrefix('dst-headers');
      const admin = await admins.on(prefix);
      const store = new ConfigStore(redis, prefix);
      const stored = async (): Promise<Destination> => (await store.snapshot()).destinations.get('d')!;
      const original = hooks('https://a.example.com/', 'https://b.example.com/');
      const created = await admin.call('POST', '/destinations', { id: 'd', name: 'Webhooks', settings: { webhooks: original } });
      expect(created.body.settings.webhooks).toEqual([
        { url: 'https://a.example.com/', headers: { 'X-Team': { set: true }, Authorization: { set: true, last4: 'en-0' } } },
        { url: 'https://b.example.com/', headers: { 'X-Team': { set: true }, Authorization: { set: true, last4: 'en-1' } } },
      ]);
      for (const read of [
        created,
        await admin.call('GET', '/destinations/d'),
        await admin.call('GET', '/destinations'),
        await admin.call('GET', '/config'),
      ])
        expect(read.text).not.toMatch(/receiver-token|team-\d/);

      // Read, change one thing, write back what was read: the hints keep the real values.
      const read = (await admin.call('GET', '/destinations/d')).body;
      const [first, second] = read.settings.webhooks;
      const rewritten = await admin.call('PATCH', '/destinations/d', {
        settings: { webhooks: [second, { ...first, headers: { ...first.headers, 'X-Extra': 'new-value' } }] },
      });
      expect(rewritten.status).toBe(200);
      expect((await stored()).settings.webhooks).toEqual([
        original[1],
        { url: 'https://a.example.com/', headers: { ...original[0]!.headers, 'X-Extra': 'new-value' } },
      ]);

      // Setting a value again is a PATCH with the value; header names compare without case.
      const rotated = await admin.call('PATCH', '/destinations/d', {
        settings: {
          webhooks: [{ url: 'https://b.example.com/', headers: { authorization: 'Bearer rotated-token-9999', 'x-team': { set: true } } }],
        },
      });
      expect(rotated.status).toBe(200);
      expect(rotated.body.settings.webhooks).toEqual([
        { url: 'https://b.example.com/', headers: { authorization: { set: true, last4: '9999' }, 'x-team': { set: true } } },
      ]);
      expect((await stored()).settings.webhooks).toEqual([
        { url: 'https://b.example.com/', headers: { authorization: 'Bearer rotated-token-9999', 'x-team': 'team-1' } },
      ]);

      // A hint with nothing stored to keep (another URL, or an unknown header) is refused by field; nothing changes.
      const before = await stored();
      const orphan = await admin.call('PATCH', '/destinations/d', {
        settings: { webhooks: [{ url: 'https://c.example.com/', headers: { authorization: { set: true, last4: '9999' } } }] },
      });
      expect(orphan.status).toBe(400);
      expect(orphan.body.fields).toEqual([
        { field: 'settings.webhooks[0].headers.authorization', message: expect.stringContaining('send the value') },
      ]);
      const unset = await admin.call('PATCH', '/destinations/d', {
        settings: { webhooks: [{ url: 'https://b.example.com/', headers: { 'X-Other': { set: false } } }] },
      });
      expect(unset.status).toBe(400);
      expect(unset.body.fields).toEqual([{ field: 'settings.webhooks[0].headers.X-Other', message: expect.any(String) }]);
      expect(await stored()).toEqual(before);
    });

    it('DELETE answers 204 with no body, then the destination is gone', async () => {
      const admin = await admins.start('dst-delete');
      await admin.call('POST', '/destinations', { id: 'gone', name: 'Webhooks', settings: { webhooks: hooks('https://a.example.com/') } });
      const deleted = await admin.call('DELETE', '/destinations/gone');
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      const got = await admin.call('GET', '/destinations/gone');
      expect(got.status).toBe(404);
      expect(got.body.code).toBe('not_found');
      expect((await admin.call('GET', '/destinations')).body).toEqual([]);
      expect((await admin.call('GET', '/destinations/gone/deliveries')).status).toBe(404);
    });
  });

  describe('the shared secret is never returned', () => {
    it('no read or write answer holds the secret; reads show a hint with its last 4 characters', async () => {
      const admin = await admins.start('secret');
      const texts: { route: string; text: string }[] = [];
      const record = async (route: string, method: string, path: string, body?: unknown) => {
        const res = await admin.call(method, path, body);
        texts.push({ route, text: res.text });
        return res;
      };
      await admin.call('POST', '/sources', { id: 'web', name: 'Web', type: 'web' });
      const created = await record('create', 'POST', '/destinations', {
        id: 'd',
        name: 'Webhooks',
        enabled: true,
        sourceIds: ['web'],
        settings: { webhooks: hooks('https://a.example.com/'), sharedSecret: FIRST_SECRET },
      });
      expect(created.status).toBe(201);
      expect(created.body.settings.sharedSecret).toEqual({ set: true, last4: '9876' });
      const patched = await record('patch', 'PATCH', '/destinations/d', { settings: { sharedSecret: SECRET } });
      expect(patched.status).toBe(200);
      expect(patched.body.settings.sharedSecret).toEqual({ set: true, last4: '1234' });
      // A refused write that carries the secret does not echo it either.
      const refused = await record('refused patch', 'PATCH', '/destinations/d', {
        settings: { sharedSecret: SECRET, webhooks: [{ url: 'https://user:pw@a.example.com/' }] },
      });
      expect(refused.status).toBe(400);
      const patchedOther = await record('patch without secret', 'PATCH', '/destinations/d', { enabled: true });
      expect(patchedOther.body.settings.sharedSecret).toEqual({ set: true, last4: '1234' });

      const got = await record('get', 'GET', '/destinations/d');
      expect(got.body.settings.sharedSecret).toEqual({ set: true, last4: '1234' });
      const list = await record('list', 'GET', '/destinations');
      expect(list.body[0].settings.sharedSecret).toEqual({ set: true, last4: '1234' });
      const exported = await record('config export', 'GET', '/config');
      expect(exported.status).toBe(200);
      const audit = await record('audit', 'GET', '/audit');
      expect(audit.body.items.length).toBeGreaterThanOrEqual(3);
      await record('deliveries', 'GET', '/destinations/d/deliveries');
      await record('dead letters', 'GET', '/destinations/d/dead-letters');

      for (const { route, text } of texts) {
        expect({ route, holdsSecret: text.includes(SECRET) || text.includes(FIRST_SECRET) }).toEqual({ route, holdsSecret: false });
        // Nor any long piece of it.
        expect({ route, holdsPart: text.includes(SECRET.slice(0, 12)) || text.includes(SECRET.slice(8, 20)) }).toEqual({
          route,
          holdsPart: false,
        });
      }
    });

    it('a secret under 8 characters shows only {set: true}; no secret shows {set: false}', async () => {
      const admin = await admins.start('secret-short');
      const short = await admin.call('POST', '/destinations', {
        id: 'short',
        name: 'Webhooks',
        settings: { webhooks: hooks('https://a.example.com/'), sharedSecret: 'abc123' },
      });
      expect(short.body.settings.sharedSecret).toEqual({ set: true });
      expect(short.text).not.toContain('abc123');
      expect((await admin.call('GET', '/destinations/short')).body.settings.sharedSecret).toEqual({ set: true });
      const seven = await admin.call('POST', '/destinations', {
        id: 'seven',
        name: 'Webhooks',
        settings: { webhooks: hooks('https://a.example.com/'), sharedSecret: 'abcdefg' },
      });
      expect(seven.body.settings.sharedSecret).toEqual({ set: true });
      const eight = await admin.call('POST', '/destinations', {
        id: 'eight',
        name: 'Webhooks',
        settings: { webhooks: hooks('https://a.example.com/'), sharedSecret: 'abcdefgh' },
      });
      expect(eight.body.settings.sharedSecret).toEqual({ set: true, last4: 'efgh' });
      const none = await admin.call('POST', '/destinations', {
        id: 'none',
        name: 'Webhooks',
        settings: { webhooks: hooks('https://a.example.com/') },
      });
      expect(none.body.settings.sharedSecret).toEqual({ set: false });
      expect((await admin.call('GET', '/destinations/none')).body.settings.sharedSecret).toEqual({ set: false });
    });
  });

  describe('unknown ids, paths and methods', () => {
    const routes: { method: string; path: string; body?: unknown }[] = [
      { method: 'GET', path: '/sources/nope' },
      { method: 'PATCH', path: '/sources/nope', body: { name: 'Valid' } },
      { method: 'DELETE', path: '/sources/nope' },
      { method: 'POST', path: '/sources/nope/rotate-write-key' },
      { method: 'GET', path: '/sources/nope/events' },
      { method: 'GET', path: '/destinations/nope' },
      { method: 'PATCH', path: '/destinations/nope', body: { enabled: true } },
      { method: 'DELETE', path: '/destinations/nope' },
      { method: 'POST', path: '/destinations/nope/rotate-secret', body: { overlapMs: 0 } },
      { method: 'GET', path: '/destinations/nope/deliveries' },
      { method: 'GET', path: '/destinations/nope/dead-letters' },
      { method: 'POST', path: '/destinations/nope/replay', body: { all: true } },
      { method: 'GET', path: '/nothing-here' },
      { method: 'GET', path: '/sources/nope/unknown-action' },
      { method: 'POST', path: '/destinations/nope/replay/extra', body: { all: true } },
    ];

    it.each(routes)('$method $path answers 404 not_found', async ({ method, path, body }) => {
      const admin = await admins.start('not-found');
      // Something exists, just not under that id.
      await admin.call('POST', '/sources', { id: 'real', name: 'Real', type: 'web' });
      await admin.call('POST', '/destinations', {
        id: 'real',
        name: 'Webhooks',
        enabled: true,
        settings: { webhooks: hooks('https://a.example.com/') },
      });
      const res = await admin.call(method, path, body);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, code: 'not_found', message: expect.any(String) });
      expect((await auditActions(admin)).map((e) => e.action)).toEqual(['destination.create', 'source.create']);
    });

    it.each([
      { method: 'PUT', path: '/destinations/x', allow: ['GET', 'PATCH', 'DELETE'] },
      { method: 'POST', path: '/destinations/x', allow: ['GET', 'PATCH', 'DELETE'] },
      { method: 'PUT', path: '/sources', allow: ['GET', 'POST'] },
      { method: 'DELETE', path: '/catalog', allow: ['GET'] },
      { method: 'GET', path: '/destinations/x/replay', allow: ['POST'] },
      { method: 'POST', path: '/audit', allow: ['GET'] },
    ])('$method $path answers 405 with Allow: $allow', async ({ method, path, allow }) => {
      const admin = await admins.start('method');
      const res = await admin.call(method, path, method === 'GET' ? undefined : {});
      expect(res.status).toBe(405);
      expect(res.body).toEqual({ success: false, code: 'method_not_allowed', message: expect.any(String) });
      const header = res.headers.get('allow');
      expect(header).not.toBeNull();
      expect(
        header!
          .split(',')
          .map((m) => m.trim())
          .sort(),
      ).toEqual([...allow].sort());
    });
  });

  describe('GET /config', () => {
    it('exports sources with write keys and destinations without their secret and header values; applying it changes nothing and keeps them', async () => {
      const prefix = uniquePrefix('export');
      const admin = await admins.on(prefix);
      const web = (await admin.call('POST', '/sources', { id: 'web', name: 'Web', type: 'web', rateLimitPerSecond: 20 })).body;
      const srv = (await admin.call('POST', '/sources', { id: 'srv', name: 'Server', type: 'server' })).body;
      await admin.call('POST', '/destinations', {
        id: 'with-secret',
        name: 'Webhooks',
        enabled: true,
        sourceIds: ['web', 'srv'],
        settings: { webhooks: hooks('https://a.example.com/h', 'https://b.example.com/h'), sharedSecret: SECRET },
      });
      await admin.call('POST', '/destinations', {
        id: 'no-secret',
        name: 'Webhooks',
        sourceIds: ['srv'],
        settings: { webhooks: hooks('https://c.example.com/h') },
      });

      const exported = await admin.call('GET', '/config');
      expect(exported.status).toBe(200);
      expect(exported.text).not.toContain(SECRET);
      expect(exported.text).not.toContain('receiver-token');
      expect(exported.body).toEqual({
        sources: [srv, web],
        destinations: [
          {
            id: 'no-secret',
            name: 'Webhooks',
            enabled: false,
            sourceIds: ['srv'],
            settings: { webhooks: withoutHeaders(hooks('https://c.example.com/h')) },
          },
          {
            id: 'with-secret',
            name: 'Webhooks',
            enabled: true,
            sourceIds: ['web', 'srv'],
            settings: { webhooks: withoutHeaders(hooks('https://a.example.com/h', 'https://b.example.com/h')) },
          },
        ],
        audiences: [],
      });
      expect(exported.body.sources[1].writeKey).toMatch(WRITE_KEY);

      const store = new ConfigStore(redis, prefix);
      const before = await store.snapshot();
      const viewsBefore = (await admin.call('GET', '/destinations')).body;
      await store.apply(checkConfig(exported.body, 'GET /admin/v1/config'));
      const after = await store.snapshot();
      expect([...after.sources.values()].sort(byId)).toEqual([...before.sources.values()].sort(byId));
      expect([...after.destinations.values()].sort(byId)).toEqual([...before.destinations.values()].sort(byId));
      expect(after.destinations.get('with-secret')!.settings.sharedSecret).toBe(SECRET);
      expect(after.destinations.get('no-secret')!.settings).not.toHaveProperty('sharedSecret');
      // The write keys still map to their sources.
      expect((await store.sourceByWriteKey(web.writeKey as string))?.id).toBe('web');
      expect((await admin.call('GET', '/destinations/with-secret')).body.settings.sharedSecret).toEqual({ set: true, last4: '1234' });
      expect((await admin.call('GET', '/destinations')).body).toEqual(viewsBefore);
      expect((await admin.call('GET', '/config')).body).toEqual(exported.body);
    });
  });

  describe('GET /audit', () => {
    it('records every write, newest first, with action, target and token id; pages walk all entries once', async () => {
      const admin = await admins.start('audit');
      const token = tokenId(ADMIN_TEST_TOKEN);
      expect(token).toMatch(/^tok_[0-9a-f]{8}$/);
      const started = Date.now();
      await admin.call('POST', '/sources', { id: 'src-a', name: 'A', type: 'web' });
      await admin.call('PATCH', '/sources/src-a', { name: 'A2' });
      await admin.call('POST', '/destinations', {
        id: 'dst-a',
        name: 'Webhooks',
        sourceIds: ['src-a'],
        settings: { webhooks: hooks('https://a.example.com/'), sharedSecret: SECRET },
      });
      await admin.call('PATCH', '/destinations/dst-a', { enabled: true, settings: { sharedSecret: FIRST_SECRET } });
      await admin.call('POST', '/sources/src-a/rotate-write-key');
      await admin.call('DELETE', '/destinations/dst-a');
      await admin.call('DELETE', '/sources/src-a');
      // Reads and refused writes are not audited.
      await admin.call('GET', '/sources');
      await admin.call('POST', '/sources', { id: 'src-a' });

      const all = await admin.call('GET', '/audit');
      expect(all.status).toBe(200);
      expect(all.body.nextCursor).toBeNull();
      const items = all.body.items as {
        action: string;
        targetId: string;
        tokenId: string;
        at: string;
        details?: Record<string, unknown>;
      }[];
      expect(items.map((e) => [e.action, e.targetId])).toEqual([
        ['source.delete', 'src-a'],
        ['destination.delete', 'dst-a'],
        ['source.rotate_write_key', 'src-a'],
        ['destination.update', 'dst-a'],
        ['destination.create', 'dst-a'],
        ['source.update', 'src-a'],
        ['source.create', 'src-a'],
      ]);
      for (const entry of items) {
        expect(entry.tokenId).toBe(token);
        expect(new Date(entry.at).toISOString()).toBe(entry.at);
        expect(Date.parse(entry.at)).toBeGreaterThanOrEqual(started - 1000);
        expect(Date.parse(entry.at)).toBeLessThanOrEqual(Date.now() + 1000);
      }
      expect(items[3]!.details).toEqual({ fields: ['enabled', 'settings.sharedSecret'] });
      expect(items[5]!.details).toEqual({ fields: ['name'] });
      expect(all.text).not.toContain(SECRET);
      expect(all.text).not.toContain(FIRST_SECRET);

      const walked: unknown[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: AdminAnswer = await admin.call(
          'GET',
          `/audit?limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
        );
        expect(page.status).toBe(200);
        expect(page.body.items.length).toBeLessThanOrEqual(2);
        walked.push(...(page.body.items as unknown[]));
        cursor = page.body.nextCursor as string | null;
        pages++;
        expect(pages).toBeLessThanOrEqual(10);
      } while (cursor !== null);
      expect(pages).toBe(4);
      expect(walked).toEqual(items);
    });

    it('keeps a cursor valid while new entries arrive', async () => {
      const admin = await admins.start('audit-cursor');
      for (const id of ['a', 'b', 'c', 'd']) await admin.call('POST', '/sources', { id, name: id, type: 'web' });
      const first = await admin.call('GET', '/audit?limit=2');
      expect(first.body.items.map((e: { targetId: string }) => e.targetId)).toEqual(['d', 'c']);
      await admin.call('POST', '/sources', { id: 'e', name: 'e', type: 'web' });
      const second = await admin.call('GET', `/audit?limit=2&cursor=${encodeURIComponent(first.body.nextCursor as string)}`);
      expect(second.body.items.map((e: { targetId: string }) => e.targetId)).toEqual(['b', 'a']);
      expect(second.body.nextCursor).toBeNull();
    });
  });

  describe('several admin tokens', () => {
    it('accepts each token of a comma-separated ADMIN_TOKEN and audits each under its own token id', async () => {
      const first = 'first-admin-token-aaaaaaaaaaaa';
      const second = 'second-admin-token-bbbbbbbbbbbb';
      const admin = await admins.start('tokens', { ADMIN_TOKEN: `${first}, ${second}` });
      const a = await admin.call('POST', '/sources', { id: 'by-first', name: 'First', type: 'web' }, { token: first });
      const b = await admin.call('POST', '/sources', { id: 'by-second', name: 'Second', type: 'web' }, { token: second });
      expect([a.status, b.status]).toEqual([201, 201]);
      expect((await admin.call('GET', '/sources', undefined, { token: first })).status).toBe(200);
      expect((await admin.call('GET', '/sources', undefined, { token: second })).status).toBe(200);
      // The default test token is not among them.
      expect((await admin.call('GET', '/sources')).status).toBe(401);
      expect((await admin.call('GET', '/sources', undefined, { token: `${first},${second}` })).status).toBe(401);

      const audit = await admin.call('GET', '/audit', undefined, { token: second });
      const entries = audit.body.items as { tokenId: string; targetId: string }[];
      expect(entries.map((e) => [e.targetId, e.tokenId])).toEqual([
        ['by-second', tokenId(second)],
        ['by-first', tokenId(first)],
      ]);
      expect(tokenId(first)).not.toBe(tokenId(second));
      expect(tokenId(first)).toMatch(/^tok_[0-9a-f]{8}$/);
      expect(audit.text).not.toContain(first);
      expect(audit.text).not.toContain(second);
    });
  });
});

function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
