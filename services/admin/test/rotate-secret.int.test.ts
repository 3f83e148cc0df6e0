/**
 * Rotating a destination's shared secret (`POST /destinations/:id/rotate-secret`) and patching the
 * delivery settings of issue 21 (Standard Webhooks, the numeric settings, a URL's disabled state,
 * ending an overlap), over real HTTP against real Redis: what is stored, what reads show, what the
 * audit log and the config export keep (never a secret), and the 400s, each naming its field and
 * writing nothing.
 */
import { Redis } from 'ioredis';
import { ConfigStore } from '@eventrelay/stores';
import type { Destination } from '@eventrelay/config';
import { startTestAdmin, type AdminAnswer, type TestAdmin } from '../../../test/support/admin';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

const NOW = Date.parse('2026-11-25T10:00:00.000Z');
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const FIRST = 'whsec_Zmlyc3Qtc2VjcmV0LWZvci1yb3RhdGlvbg==';
const URL_A = 'https://a.example.com/in';
const URL_B = 'https://b.example.com/in';
const hint = (secret: string) => ({ set: true, last4: secret.slice(-4) });

describe('destination secret rotation and delivery settings', () => {
  let redis: Redis;
  let store: ConfigStore;
  let admin: TestAdmin;
  let prefix: string;
  let now = NOW;

  beforeAll(() => {
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    await redis.quit();
  });
  beforeEach(async () => {
    now = NOW;
    prefix = uniquePrefix('rotate-secret');
    store = new ConfigStore(redis, prefix);
    admin = await startTestAdmin({ prefix, clock: () => now });
    const created = await admin.call('POST', '/destinations', {
      id: 'dst',
      name: 'Webhooks',
      settings: { webhooks: [{ url: URL_A }, { url: URL_B }], sharedSecret: FIRST, standardWebhooks: true },
    });
    expect(created.status).toBe(201);
  });
  afterEach(async () => {
    await admin.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  const stored = async (): Promise<Destination> => (await store.snapshot()).destinations.get('dst')!;
  const audit = async () => (await admin.call('GET', '/audit?limit=1000')).body.items as { action: string; details?: unknown }[];
  /** Everything a refused write must leave alone. */
  const everything = async () => ({ snapshot: await store.snapshot(), audit: await audit() });
  function expectInvalid(res: AdminAnswer, fields: readonly string[]): void {
    expect({ status: res.status, code: res.body?.code }).toEqual({ status: 400, code: 'invalid_request' });
    expect([...new Set(res.body.fields.map((f: { field: string }) => f.field))]).toEqual(fields);
  }

  describe('POST /destinations/:id/rotate-secret', () => {
    it('without a body: generates a whsec_ secret of 32 random bytes, shown once, and keeps the current one signing 24 h', async () => {
      const res = await admin.call('POST', '/destinations/dst/rotate-secret');
      expect(res.status).toBe(200);
      const secret = res.body.secret as string;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
      expect(res.body.previousExpiresAt).toBe(iso(NOW + DAY));
      expect(res.body.destination.settings).toEqual({
        webhooks: [{ url: URL_A }, { url: URL_B }],
        sharedSecret: hint(secret),
        previousSecret: { ...hint(FIRST), expiresAt: iso(NOW + DAY) },
        standardWebhooks: true,
      });
      expect((await stored()).settings).toEqual({
        webhooks: [{ url: URL_A }, { url: URL_B }],
        sharedSecret: secret,
        previousSecret: { secret: FIRST, expiresAt: iso(NOW + DAY) },
        standardWebhooks: true,
      });
      // A second rotation generates another secret.
      now += 1000;
      const again = await admin.call('POST', '/destinations/dst/rotate-secret', {});
      expect(again.body.secret).toMatch(/^whsec_/);
      expect(again.body.secret).not.toBe(secret);

      // Shown that once: reads, the audit log and the export hold neither secret.
      const read = await admin.call('GET', '/destinations/dst');
      expect(read.body).toEqual(again.body.destination);
      const entries = await audit();
      expect(entries.filter((e) => e.action === 'destination.secret_rotated').map((e) => e.details)).toEqual([
        { overlapMs: DAY },
        { overlapMs: DAY },
      ]);
      for (const text of [read.text, JSON.stringify(entries), (await admin.call('GET', '/config')).text]) {
        expect(text).not.toContain(secret.slice('whsec_'.length));
        expect(text).not.toContain(again.body.secret.slice('whsec_'.length));
        expect(text).not.toContain(FIRST.slice('whsec_'.length));
      }
    });

    it('takes the secret and overlap given; rotating again during the overlap replaces the previous secret with the current one', async () => {
      const first = await admin.call('POST', '/destinations/dst/rotate-secret', { secret: 'second-secret-0000002', overlapMs: 3_600_000 });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        secret: 'second-secret-0000002',
        previousExpiresAt: iso(NOW + 3_600_000),
        destination: expect.objectContaining({ id: 'dst' }),
      });
      now += 60_000;
      const second = await admin.call('POST', '/destinations/dst/rotate-secret', { secret: 'third-secret-00000003', overlapMs: 600_000 });
      expect(second.body.previousExpiresAt).toBe(iso(now + 600_000));
      expect((await stored()).settings.previousSecret).toEqual({ secret: 'second-secret-0000002', expiresAt: iso(now + 600_000) });
      expect((await stored()).settings.sharedSecret).toBe('third-secret-00000003');
      expect(JSON.stringify(await stored())).not.toContain(FIRST);
    });

    it('with overlapMs 0 replaces the secret at once, ending an overlap under way', async () => {
      await admin.call('POST', '/destinations/dst/rotate-secret', { secret: 'second-secret-0000002' });
      const res = await admin.call('POST', '/destinations/dst/rotate-secret', { secret: 'third-secret-00000003', overlapMs: 0 });
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty('previousExpiresAt');
      expect(res.body.destination.settings).not.toHaveProperty('previousSecret');
      expect((await stored()).settings).not.toHaveProperty('previousSecret');
      expect((await audit()).find((e) => e.action === 'destination.secret_rotated')?.details).toEqual({ overlapMs: 0 });
    });

    it('with no current secret just sets the new one', async () => {
      const made = await admin.call('POST', '/destinations', { id: 'plain', name: 'Webhooks', settings: { webhooks: [{ url: URL_A }] } });
      expect(made.body.settings.sharedSecret).toEqual({ set: false });
      const res = await admin.call('POST', '/destinations/plain/rotate-secret', { secret: 'first-secret-00000001' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        secret: 'first-secret-00000001',
        destination: { ...made.body, settings: { webhooks: [{ url: URL_A }], sharedSecret: hint('first-secret-00000001') } },
      });
    });

    it.each([
      { name: 'a secret under 16 characters', body: { secret: 'short-secret' }, fields: ['secret'] },
      { name: 'an overlap over 7 days', body: { overlapMs: 7 * DAY + 1 }, fields: ['overlapMs'] },
      { name: 'a negative overlap', body: { overlapMs: -1 }, fields: ['overlapMs'] },
      { name: 'an overlap that is not a whole number', body: { overlapMs: 1.5 }, fields: ['overlapMs'] },
      { name: 'an unknown field', body: { secret: 'long-enough-secret-01', previousSecret: FIRST }, fields: ['previousSecret'] },
      { name: 'the current secret', body: { secret: FIRST }, fields: ['secret'] },
    ])('refuses $name with 400 naming the field, and writes nothing', async ({ body, fields }) => {
      const before = await everything();
      expectInvalid(await admin.call('POST', '/destinations/dst/rotate-secret', body), fields);
      expect(await everything()).toEqual(before);
    });
  });

  describe('PATCH /destinations/:id with the delivery settings', () => {
    const numbers = {
      timeoutMs: 8000,
      retryWindowMs: 3_600_000,
      maxConcurrentRequests: 8,
      maxRequestsPerSecond: 20,
      autoDisableAfterMs: DAY,
    };

    it('sets the numeric settings and Standard Webhooks, keeps them when left out, and removes each on null', async () => {
      const set = await admin.call('PATCH', '/destinations/dst', { settings: { ...numbers, standardWebhooks: false } });
      expect(set.status).toBe(200);
      expect(set.body.settings).toEqual({
        webhooks: [{ url: URL_A }, { url: URL_B }],
        sharedSecret: hint(FIRST),
        standardWebhooks: false,
        ...numbers,
      });
      expect((await admin.call('PATCH', '/destinations/dst', { enabled: true })).body.settings).toEqual(set.body.settings);
      const reset = await admin.call('PATCH', '/destinations/dst', {
        settings: {
          timeoutMs: null,
          retryWindowMs: null,
          maxConcurrentRequests: null,
          maxRequestsPerSecond: null,
          autoDisableAfterMs: null,
          standardWebhooks: null,
        },
      });
      expect(reset.body.settings).toEqual({ webhooks: [{ url: URL_A }, { url: URL_B }], sharedSecret: hint(FIRST) });
      expect((await stored()).settings).toEqual({ webhooks: [{ url: URL_A }, { url: URL_B }], sharedSecret: FIRST });
    });

    it('ends an overlap on previousSecret: null; sharedSecret: null removes both secrets', async () => {
      await admin.call('POST', '/destinations/dst/rotate-secret', { secret: 'second-secret-0000002' });
      const ended = await admin.call('PATCH', '/destinations/dst', { settings: { previousSecret: null } });
      expect(ended.status).toBe(200);
      expect(ended.body.settings).not.toHaveProperty('previousSecret');
      expect((await stored()).settings.sharedSecret).toBe('second-secret-0000002');

      await admin.call('POST', '/destinations/dst/rotate-secret', { secret: 'third-secret-00000003' });
      const removed = await admin.call('PATCH', '/destinations/dst', { settings: { sharedSecret: null, standardWebhooks: null } });
      expect(removed.status).toBe(200);
      expect((await stored()).settings).toEqual({ webhooks: [{ url: URL_A }, { url: URL_B }] });
    });

    it('keeps a URL’s disabled state when the webhooks are sent back without it; disabled: false re-enables it', async () => {
      const disabled = await admin.call('PATCH', '/destinations/dst', {
        settings: { webhooks: [{ url: URL_A }, { url: URL_B, disabled: true, disabledReason: 'answered 410 Gone' }] },
      });
      expect(disabled.body.settings.webhooks).toEqual([
        { url: URL_A },
        { url: URL_B, disabled: true, disabledReason: 'answered 410 Gone' },
      ]);
      const edited = await admin.call('PATCH', '/destinations/dst', {
        settings: { webhooks: [{ url: URL_A, headers: { 'X-Team': 'a' } }, { url: URL_B }] },
      });
      expect((await stored()).settings.webhooks).toEqual([
        { url: URL_A, headers: { 'X-Team': 'a' } },
        { url: URL_B, disabled: true, disabledReason: 'answered 410 Gone' },
      ]);
      expect(edited.body.settings.webhooks[1]).toEqual({ url: URL_B, disabled: true, disabledReason: 'answered 410 Gone' });
      const enabled = await admin.call('PATCH', '/destinations/dst', {
        settings: { webhooks: [{ url: URL_A }, { url: URL_B, disabled: false, disabledReason: 'answered 410 Gone' }] },
      });
      expect(enabled.body.settings.webhooks).toEqual([{ url: URL_A }, { url: URL_B }]);
    });

    it.each([
      { name: 'a timeout under 1 s', settings: { timeoutMs: 999 }, fields: ['settings.timeoutMs'] },
      { name: 'a retry window over 72 h', settings: { retryWindowMs: 3 * DAY + 1 }, fields: ['settings.retryWindowMs'] },
      { name: 'a concurrency of 0', settings: { maxConcurrentRequests: 0 }, fields: ['settings.maxConcurrentRequests'] },
      { name: 'a rate as a string', settings: { maxRequestsPerSecond: '10' }, fields: ['settings.maxRequestsPerSecond'] },
      { name: 'an auto-disable under 1 min', settings: { autoDisableAfterMs: 1000 }, fields: ['settings.autoDisableAfterMs'] },
      { name: 'standardWebhooks as a string', settings: { standardWebhooks: 'yes' }, fields: ['settings.standardWebhooks'] },
      {
        name: 'a previous secret set by hand',
        settings: { previousSecret: { secret: 'x', expiresAt: iso(NOW + DAY) } },
        fields: ['settings.previousSecret'],
      },
      { name: 'removing the secret Standard Webhooks signs with', settings: { sharedSecret: null }, fields: ['settings.standardWebhooks'] },
      { name: 'a URL given twice', settings: { webhooks: [{ url: URL_A }, { url: URL_A }] }, fields: ['settings.webhooks[1].url'] },
      {
        name: 'disabled as a string',
        settings: { webhooks: [{ url: URL_A, disabled: 'yes' }] },
        fields: ['settings.webhooks[0].disabled'],
      },
      {
        name: 'a reason for a URL that is not disabled',
        settings: { webhooks: [{ url: URL_A, disabledReason: 'why' }] },
        fields: ['settings.webhooks[0].disabledReason'],
      },
    ])('refuses $name with 400 naming the field, and writes nothing', async ({ settings, fields }) => {
      const before = await everything();
      expectInvalid(await admin.call('PATCH', '/destinations/dst', { settings }), fields);
      expect(await everything()).toEqual(before);
    });

    it('refuses Standard Webhooks on a destination without a secret, naming the field', async () => {
      await admin.call('POST', '/destinations', { id: 'plain', name: 'Webhooks', settings: { webhooks: [{ url: URL_A }] } });
      expectInvalid(await admin.call('PATCH', '/destinations/plain', { settings: { standardWebhooks: true } }), [
        'settings.standardWebhooks',
      ]);
    });
  });
});
