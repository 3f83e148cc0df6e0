/**
 * Every refusal of bad input by the admin API (docs/spec.md §6: "Invalid input gets 400 naming the
 * field; nothing half-written"): the status, the code, the exact field path, and that a refused
 * write leaves the stored config, its version and the audit log as they were.
 */
import { Redis } from 'ioredis';
import { ConfigStore } from '@eventrelay/stores';
import { startTestAdmin, type AdminAnswer, type TestAdmin } from '../../../test/support/admin';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';

interface Case {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  /** The exact field paths of the answer's `fields`, in order. */
  readonly fields: readonly string[];
}

const hook = (extra: Record<string, unknown> = {}) => ({ url: 'https://hooks.example.com/in', ...extra });
const settings = (webhooks: unknown[], extra: Record<string, unknown> = {}) => ({ webhooks, ...extra });
const newDestination = (extra: Record<string, unknown>) => ({ name: 'Webhooks', settings: settings([hook()]), ...extra });
const withHeader = (name: string, value = 'v') => newDestination({ settings: settings([hook({ headers: { [name]: value } })]) });
const REPLAY_ID = expect.stringMatching(/^rpl_[0-9a-f]{16}$/) as unknown;

/**
 * One admin per describe block on a prefix of its own, with the fixtures below; every case checks
 * afterwards that nothing was written (version, config and audit log unchanged).
 */
function fixture(label: string) {
  const state: { admin?: TestAdmin; redis?: Redis; store?: ConfigStore; prefix: string } = { prefix: uniquePrefix(label) };
  beforeAll(async () => {
    const admin = (state.admin = await startTestAdmin({ prefix: state.prefix }));
    state.redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
    state.store = new ConfigStore(state.redis, state.prefix);
    const answers = [
      await admin.call('POST', '/sources', { id: 'src-a', name: 'A', type: 'web' }),
      await admin.call('POST', '/sources', { id: 'src-b', name: 'B', type: 'server', rateLimitPerSecond: 10 }),
      await admin.call('POST', '/destinations', {
        id: 'dst-off',
        name: 'Webhooks',
        sourceIds: ['src-a'],
        settings: settings([hook({ headers: { 'X-Team': 'a' } })], { sharedSecret: 'whsec_fixture_secret_0001' }),
      }),
      await admin.call('POST', '/destinations', {
        id: 'dst-on',
        name: 'Webhooks',
        enabled: true,
        sourceIds: ['src-a', 'src-b'],
        settings: settings([hook()]),
      }),
    ];
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
  });
  afterAll(async () => {
    await state.admin?.close();
    await state.redis?.quit();
    await deletePrefix(SHARED_REDIS_URL, state.prefix);
  });
  /** Everything a refused write must leave alone. */
  const everything = async () => {
    const snapshot = await state.store!.snapshot();
    const audit = await state.admin!.call('GET', '/audit?limit=1000');
    return {
      version: snapshot.version,
      sources: [...snapshot.sources.entries()].sort(),
      destinations: [...snapshot.destinations.entries()].sort(),
      audit: audit.body,
    };
  };
  return {
    admin: () => state.admin!,
    everything,
    /** Sends the request and checks the 400 answer, and that nothing changed. */
    async refused(c: Pick<Case, 'method' | 'path' | 'body'>, options: { rawBody?: string } = {}): Promise<AdminAnswer> {
      const before = await everything();
      const res = await state.admin!.call(c.method, c.path, c.body, options);
      expect(await everything()).toEqual(before);
      return res;
    },
  };
}

function expectInvalid(res: AdminAnswer, fields: readonly string[]): void {
  expect({ status: res.status, code: res.body?.code, success: res.body?.success }).toEqual({
    status: 400,
    code: 'invalid_request',
    success: false,
  });
  expect(res.body.fields.map((f: { field: string }) => f.field)).toEqual(fields);
  for (const f of res.body.fields as { field: string; message: string }[]) {
    expect(f.message).toEqual(expect.any(String));
    expect(f.message.length).toBeGreaterThan(0);
  }
  expect(typeof res.body.message).toBe('string');
}

describe('admin API validation', () => {
  describe('request bodies', () => {
    const f = fixture('val-bodies');

    const cases: Case[] = [
      // Source create
      { name: 'source create without name', method: 'POST', path: '/sources', body: { type: 'web' }, fields: ['name'] },
      { name: 'source create with an empty name', method: 'POST', path: '/sources', body: { name: '', type: 'web' }, fields: ['name'] },
      { name: 'source create with a bad type', method: 'POST', path: '/sources', body: { name: 'S', type: 'desktop' }, fields: ['type'] },
      {
        name: 'source create with an unknown field',
        method: 'POST',
        path: '/sources',
        body: { name: 'S', type: 'web', color: 'red' },
        fields: ['color'],
      },
      {
        name: 'source create with a writeKey',
        method: 'POST',
        path: '/sources',
        body: { name: 'S', type: 'web', writeKey: 'wk_mine_00000000000000000000000000000000' },
        fields: ['writeKey'],
      },
      {
        name: 'source create with an id with a space',
        method: 'POST',
        path: '/sources',
        body: { id: 'bad id', name: 'S', type: 'web' },
        fields: ['id'],
      },
      {
        name: 'source create with an id with a colon',
        method: 'POST',
        path: '/sources',
        body: { id: 'bad:id', name: 'S', type: 'web' },
        fields: ['id'],
      },
      {
        name: 'source create with an id with a slash',
        method: 'POST',
        path: '/sources',
        body: { id: 'bad/id', name: 'S', type: 'web' },
        fields: ['id'],
      },
      {
        name: 'source create with a 65-character id',
        method: 'POST',
        path: '/sources',
        body: { id: 'a'.repeat(65), name: 'S', type: 'web' },
        fields: ['id'],
      },
      {
        name: 'source create with an empty id',
        method: 'POST',
        path: '/sources',
        body: { id: '', name: 'S', type: 'web' },
        fields: ['id'],
      },
      {
        name: 'source create with rateLimitPerSecond 0',
        method: 'POST',
        path: '/sources',
        body: { name: 'S', type: 'web', rateLimitPerSecond: 0 },
        fields: ['rateLimitPerSecond'],
      },
      {
        name: 'source create with rateLimitPerSecond 1.5',
        method: 'POST',
        path: '/sources',
        body: { name: 'S', type: 'web', rateLimitPerSecond: 1.5 },
        fields: ['rateLimitPerSecond'],
      },
      {
        name: 'source create with rateLimitPerSecond null',
        method: 'POST',
        path: '/sources',
        body: { name: 'S', type: 'web', rateLimitPerSecond: null },
        fields: ['rateLimitPerSecond'],
      },
      {
        name: 'source create with an array body',
        method: 'POST',
        path: '/sources',
        body: [{ name: 'S', type: 'web' }],
        fields: ['(root)'],
      },
      // Source patch
      { name: 'source patch {}', method: 'PATCH', path: '/sources/src-a', body: {}, fields: ['(root)'] },
      {
        name: 'source patch of the write key',
        method: 'PATCH',
        path: '/sources/src-a',
        body: { writeKey: 'wk_mine_00000000000000000000000000000000' },
        fields: ['writeKey'],
      },
      { name: 'source patch of the id', method: 'PATCH', path: '/sources/src-a', body: { id: 'src-z' }, fields: ['id'] },
      { name: 'source patch with a bad type', method: 'PATCH', path: '/sources/src-a', body: { type: 'tv' }, fields: ['type'] },
      {
        name: 'source patch with rateLimitPerSecond 0',
        method: 'PATCH',
        path: '/sources/src-b',
        body: { rateLimitPerSecond: 0 },
        fields: ['rateLimitPerSecond'],
      },
      { name: 'source patch with an empty name', method: 'PATCH', path: '/sources/src-a', body: { name: '' }, fields: ['name'] },
      // Destination create
      {
        name: "destination create named other than 'Webhooks'",
        method: 'POST',
        path: '/destinations',
        body: newDestination({ name: 'Webhook' }),
        fields: ['name'],
      },
      {
        name: 'destination create without settings',
        method: 'POST',
        path: '/destinations',
        body: { name: 'Webhooks' },
        fields: ['settings'],
      },
      {
        name: 'destination create with 0 webhooks',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ settings: settings([]) }),
        fields: ['settings.webhooks'],
      },
      {
        name: 'destination create with 6 webhooks',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ settings: settings([1, 2, 3, 4, 5, 6].map((i) => ({ url: `https://h${i}.example.com/` }))) }),
        fields: ['settings.webhooks'],
      },
      {
        name: "destination create with url 'ftp://x'",
        method: 'POST',
        path: '/destinations',
        body: newDestination({ settings: settings([{ url: 'ftp://x' }]) }),
        fields: ['settings.webhooks[0].url'],
      },
      {
        name: "destination create with url 'not a url'",
        method: 'POST',
        path: '/destinations',
        body: newDestination({ settings: settings([{ url: 'not a url' }]) }),
        fields: ['settings.webhooks[0].url'],
      },
      {
        name: 'destination create with a url with user:pass@',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ settings: settings([{ url: 'https://user:pass@hooks.example.com/in' }]) }),
        fields: ['settings.webhooks[0].url'],
      },
      {
        name: 'destination create with a url with a user name only',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ settings: settings([{ url: 'https://user@hooks.example.com/in' }]) }),
        fields: ['settings.webhooks[0].url'],
      },
      {
        name: 'destination create with a relative url',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ settings: settings([{ url: '/hooks/in' }]) }),
        fields: ['settings.webhooks[0].url'],
      },
      {
        name: 'destination create with a url with a space',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ settings: settings([{ url: 'https://hooks.example.com/a b' }]) }),
        fields: ['settings.webhooks[0].url'],
      },
      {
        name: 'destination create with a bad url as the third webhook',
        method: 'POST',
        path: '/destinations',
        body: newDestination({
          settings: settings([hook(), hook({ url: 'https://hooks.example.com/second' }), { url: 'https://u:p@x.example.com/' }]),
        }),
        fields: ['settings.webhooks[2].url'],
      },
      {
        name: 'destination create with a webhook without url',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ settings: settings([{ headers: {} }]) }),
        fields: ['settings.webhooks[0].url'],
      },
      {
        name: 'destination create with an unknown webhook field',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ settings: settings([hook({ method: 'PUT' })]) }),
        fields: ['settings.webhooks[0].method'],
      },
      {
        name: 'destination create with a header name with a space',
        method: 'POST',
        path: '/destinations',
        body: withHeader('X Team'),
        fields: ['settings.webhooks[0].headers.X Team'],
      },
      {
        name: 'destination create with a non-ASCII header name',
        method: 'POST',
        path: '/destinations',
        body: withHeader('X-Équipe'),
        fields: ['settings.webhooks[0].headers.X-Équipe'],
      },
      {
        name: 'destination create with a header name with a colon',
        method: 'POST',
        path: '/destinations',
        body: withHeader('X-Team:'),
        fields: ['settings.webhooks[0].headers.X-Team:'],
      },
      ...[
        'User-Agent',
        'content-type',
        'X-SIGNATURE',
        'Host',
        'content-length',
        'X-Eventrelay-Message-Id',
        'x-eventrelay-attempt',
        'X-Eventrelay-Anything',
        'Transfer-Encoding',
        'CONNECTION',
        'Keep-Alive',
        'Upgrade',
        'Expect',
        'TE',
        'Trailer',
        'Proxy-Connection',
      ].map((name): Case => ({
        name: `destination create with the reserved header ${name}`,
        method: 'POST',
        path: '/destinations',
        body: withHeader(name),
        fields: [`settings.webhooks[0].headers.${name}`],
      })),
      {
        name: 'destination create with a header value with CR LF',
        method: 'POST',
        path: '/destinations',
        body: withHeader('X-Team', 'a\r\nX-Injected: 1'),
        fields: ['settings.webhooks[0].headers.X-Team'],
      },
      {
        name: 'destination create with a header value with LF',
        method: 'POST',
        path: '/destinations',
        body: withHeader('X-Team', 'a\nb'),
        fields: ['settings.webhooks[0].headers.X-Team'],
      },
      {
        name: 'destination create with a header value with CR',
        method: 'POST',
        path: '/destinations',
        body: withHeader('X-Team', 'a\rb'),
        fields: ['settings.webhooks[0].headers.X-Team'],
      },
      {
        name: 'destination create with a header value with NUL',
        method: 'POST',
        path: '/destinations',
        body: withHeader('X-Team', 'a\u0000b'),
        fields: ['settings.webhooks[0].headers.X-Team'],
      },
      {
        name: 'destination create with a non-string header value',
        method: 'POST',
        path: '/destinations',
        body: withHeader('X-Team', 5 as unknown as string),
        fields: ['settings.webhooks[0].headers.X-Team'],
      },
      {
        name: 'destination create with a bad header on the second webhook',
        method: 'POST',
        path: '/destinations',
        body: newDestination({
          settings: settings([
            hook({ headers: { 'X-Ok': 'fine' } }),
            hook({ url: 'https://hooks.example.com/second', headers: { 'X-Ok': 'fine', Host: 'evil.example.com' } }),
          ]),
        }),
        fields: ['settings.webhooks[1].headers.Host'],
      },
      {
        name: 'destination create with sourceIds naming an unknown source',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ sourceIds: ['src-a', 'src-ghost'] }),
        fields: ['sourceIds[1]'],
      },
      {
        name: 'destination create with duplicate sourceIds',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ sourceIds: ['src-a', 'src-a'] }),
        fields: ['sourceIds'],
      },
      {
        name: 'destination create with a bad source id',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ sourceIds: ['src a'] }),
        fields: ['sourceIds[0]'],
      },
      {
        name: "destination create with sharedSecret ''",
        method: 'POST',
        path: '/destinations',
        body: newDestination({ settings: settings([hook()], { sharedSecret: '' }) }),
        fields: ['settings.sharedSecret'],
      },
      {
        name: 'destination create with sharedSecret null',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ settings: settings([hook()], { sharedSecret: null }) }),
        fields: ['settings.sharedSecret'],
      },
      {
        name: "destination create with enabled 'yes'",
        method: 'POST',
        path: '/destinations',
        body: newDestination({ enabled: 'yes' }),
        fields: ['enabled'],
      },
      {
        name: 'destination create with a bad id',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ id: 'dst.1' }),
        fields: ['id'],
      },
      {
        name: 'destination create with an unknown settings field',
        method: 'POST',
        path: '/destinations',
        body: newDestination({ settings: settings([hook()], { retries: 3 }) }),
        fields: ['settings.retries'],
      },
      // Destination patch
      { name: 'destination patch {}', method: 'PATCH', path: '/destinations/dst-off', body: {}, fields: ['(root)'] },
      {
        name: 'destination patch {settings: {}}',
        method: 'PATCH',
        path: '/destinations/dst-off',
        body: { settings: {} },
        fields: ['settings'],
      },
      {
        name: "destination patch enabled: 'yes'",
        method: 'PATCH',
        path: '/destinations/dst-off',
        body: { enabled: 'yes' },
        fields: ['enabled'],
      },
      {
        name: "destination patch sharedSecret: ''",
        method: 'PATCH',
        path: '/destinations/dst-off',
        body: { settings: { sharedSecret: '' } },
        fields: ['settings.sharedSecret'],
      },
      {
        name: 'destination patch of the name',
        method: 'PATCH',
        path: '/destinations/dst-off',
        body: { name: 'Webhooks' },
        fields: ['name'],
      },
      { name: 'destination patch of the id', method: 'PATCH', path: '/destinations/dst-off', body: { id: 'dst-new' }, fields: ['id'] },
      {
        name: 'destination patch with 0 webhooks',
        method: 'PATCH',
        path: '/destinations/dst-off',
        body: { settings: { webhooks: [] } },
        fields: ['settings.webhooks'],
      },
      {
        name: 'destination patch with a url with credentials',
        method: 'PATCH',
        path: '/destinations/dst-off',
        body: { settings: { webhooks: [{ url: 'http://a:b@x.example.com/' }] } },
        fields: ['settings.webhooks[0].url'],
      },
      {
        name: 'destination patch with a reserved header',
        method: 'PATCH',
        path: '/destinations/dst-off',
        body: { settings: { webhooks: [hook({ headers: { 'x-signature': 'forged' } })] } },
        fields: ['settings.webhooks[0].headers.x-signature'],
      },
      {
        name: 'destination patch with an unknown source',
        method: 'PATCH',
        path: '/destinations/dst-off',
        body: { sourceIds: ['src-b', 'src-a', 'nope'] },
        fields: ['sourceIds[2]'],
      },
      {
        name: 'destination patch with duplicate sourceIds',
        method: 'PATCH',
        path: '/destinations/dst-off',
        body: { sourceIds: ['src-b', 'src-b'] },
        fields: ['sourceIds'],
      },
      // Replay (dst-on is enabled, so only the body can be wrong)
      { name: 'replay {}', method: 'POST', path: '/destinations/dst-on/replay', body: {}, fields: ['(root)'] },
      { name: 'replay without a body', method: 'POST', path: '/destinations/dst-on/replay', fields: ['(root)'] },
      { name: 'replay {all: false}', method: 'POST', path: '/destinations/dst-on/replay', body: { all: false }, fields: ['all'] },
      {
        name: 'replay {all: true, since} (two selections at once)',
        method: 'POST',
        path: '/destinations/dst-on/replay',
        body: { all: true, since: '2026-01-01T00:00:00Z' },
        fields: ['(root)'],
      },
      {
        name: 'replay {all: true, messageIds} (two selections at once)',
        method: 'POST',
        path: '/destinations/dst-on/replay',
        body: { all: true, messageIds: ['m1'] },
        fields: ['(root)'],
      },
      {
        name: "replay {since: 'yesterday'}",
        method: 'POST',
        path: '/destinations/dst-on/replay',
        body: { since: 'yesterday' },
        fields: ['since'],
      },
      {
        name: "replay {since: '2026-13-45T00:00:00Z'}",
        method: 'POST',
        path: '/destinations/dst-on/replay',
        body: { since: '2026-13-45T00:00:00Z' },
        fields: ['since'],
      },
      // V8's Date.parse rolls 30 February over to 2 March instead of refusing it.
      {
        name: "replay {since: '2026-02-30T00:00:00Z'} (no such day)",
        method: 'POST',
        path: '/destinations/dst-on/replay',
        body: { since: '2026-02-30T00:00:00Z' },
        fields: ['since'],
      },
      {
        name: 'replay {since: a bare number}',
        method: 'POST',
        path: '/destinations/dst-on/replay',
        body: { since: '1700000000000' },
        fields: ['since'],
      },
      {
        name: 'replay {messageIds: []}',
        method: 'POST',
        path: '/destinations/dst-on/replay',
        body: { messageIds: [] },
        fields: ['messageIds'],
      },
      {
        name: 'replay {messageIds: duplicates}',
        method: 'POST',
        path: '/destinations/dst-on/replay',
        body: { messageIds: ['m1', 'm1'] },
        fields: ['messageIds'],
      },
      {
        name: 'replay {messageIds: [""]}',
        method: 'POST',
        path: '/destinations/dst-on/replay',
        body: { messageIds: [''] },
        fields: ['messageIds[0]'],
      },
      {
        name: 'replay with an unknown field',
        method: 'POST',
        path: '/destinations/dst-on/replay',
        body: { everything: true },
        fields: ['everything'],
      },
      {
        name: 'replay {filter: {until: "later"}}',
        method: 'POST',
        path: '/destinations/dst-on/replay',
        body: { filter: { until: 'later' } },
        fields: ['filter.until'],
      },
      {
        name: 'replay {filter: {status}} (not a filter field)',
        method: 'POST',
        path: '/destinations/dst-on/replay',
        body: { filter: { status: 'failed' } },
        fields: ['filter.status'],
      },
      {
        name: 'replay {filter, all} (one selection only)',
        method: 'POST',
        path: '/destinations/dst-on/replay',
        body: { filter: { q: 'x' }, all: true },
        fields: ['(root)'],
      },
      // Test send (dst-on is enabled and has sources, so only the body can be wrong)
      {
        name: 'test-send {type: "delete"}',
        method: 'POST',
        path: '/destinations/dst-on/test-send',
        body: { type: 'delete' },
        fields: ['type'],
      },
      { name: 'test-send {}', method: 'POST', path: '/destinations/dst-on/test-send', body: {}, fields: ['type'] },
      {
        name: 'test-send from a source not connected',
        method: 'POST',
        path: '/destinations/dst-on/test-send',
        body: { type: 'track', sourceId: 'src-elsewhere' },
        fields: ['sourceId'],
      },
    ];

    it.each(cases)('$name → 400 naming $fields', async (c) => {
      expectInvalid(await f.refused(c), c.fields);
    });

    it('a valid replay on the enabled destination is accepted (the bodies above fail for their own reason)', async () => {
      const res = await f.admin().call('POST', '/destinations/dst-on/replay', { since: '2026-01-01T00:00:00Z' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ replayId: REPLAY_ID, replayed: 0, notFound: [] });
      const byIds = await f.admin().call('POST', '/destinations/dst-on/replay', { messageIds: ['m-unknown-1', 'm-unknown-2'] });
      expect(byIds.status).toBe(200);
      expect(byIds.body).toEqual({ replayId: REPLAY_ID, replayed: 0, notFound: ['m-unknown-1', 'm-unknown-2'] });
      const [latest] = (await f.admin().call('GET', '/audit?limit=1')).body.items;
      expect(latest).toMatchObject({ action: 'destination.replay', targetId: 'dst-on', details: { selection: 'messages', replayed: 0 } });
    });

    it('invalid JSON answers 400 naming (body)', async () => {
      for (const rawBody of ['{"name": "S", "type": ', '{name: "S"}', 'null', '"a string"', '{"name":"S","type":"web"}}']) {
        const res = await f.refused({ method: 'POST', path: '/sources' }, { rawBody });
        expectInvalid(res, ['(body)']);
      }
      expectInvalid(await f.refused({ method: 'PATCH', path: '/destinations/dst-off' }, { rawBody: '{"enabled": tru' }), ['(body)']);
    });

    it('a body over 1 MB answers 400 payload_too_large', async () => {
      const rawBody = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 16), type: 'web' });
      const res = await f.refused({ method: 'POST', path: '/sources' }, { rawBody });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, code: 'payload_too_large', message: expect.any(String) });
      const patch = await f.refused(
        { method: 'PATCH', path: '/destinations/dst-off' },
        { rawBody: JSON.stringify({ settings: { webhooks: [hook({ headers: { 'X-Big': 'y'.repeat(1_100_000) } })] } }) },
      );
      expect(patch.body.code).toBe('payload_too_large');
    });
  });

  describe('query parameters', () => {
    const f = fixture('val-query');

    const cases: Case[] = [
      { name: 'deliveries limit=0', method: 'GET', path: '/destinations/dst-on/deliveries?limit=0', fields: ['limit'] },
      { name: 'deliveries limit=1001', method: 'GET', path: '/destinations/dst-on/deliveries?limit=1001', fields: ['limit'] },
      { name: 'deliveries limit=abc', method: 'GET', path: '/destinations/dst-on/deliveries?limit=abc', fields: ['limit'] },
      { name: 'deliveries limit=2.5', method: 'GET', path: '/destinations/dst-on/deliveries?limit=2.5', fields: ['limit'] },
      { name: 'deliveries limit=-1', method: 'GET', path: '/destinations/dst-on/deliveries?limit=-1', fields: ['limit'] },
      { name: 'deliveries status=bogus', method: 'GET', path: '/destinations/dst-on/deliveries?status=bogus', fields: ['status'] },
      { name: 'deliveries cursor=abc', method: 'GET', path: '/destinations/dst-on/deliveries?cursor=abc', fields: ['cursor'] },
      {
        name: 'deliveries cursor of 19 digits',
        method: 'GET',
        path: `/destinations/dst-on/deliveries?cursor=${'9'.repeat(19)}`,
        fields: ['cursor'],
      },
      {
        name: 'deliveries statusClass=6xx',
        method: 'GET',
        path: '/destinations/dst-on/deliveries?statusClass=6xx',
        fields: ['statusClass'],
      },
      { name: 'deliveries since=yesterday', method: 'GET', path: '/destinations/dst-on/deliveries?since=yesterday', fields: ['since'] },
      {
        name: 'deliveries since and until without a zone',
        method: 'GET',
        path: '/destinations/dst-on/deliveries?since=2026-01-01T00:00:00&until=2026-01-02T00:00:00',
        fields: ['since', 'until'],
      },
      { name: 'dead-letters until=soon', method: 'GET', path: '/destinations/dst-on/dead-letters?until=soon', fields: ['until'] },
      { name: 'dead-letters q empty', method: 'GET', path: '/destinations/dst-on/dead-letters?q=', fields: ['q'] },
      { name: 'deliveries unknown parameter', method: 'GET', path: '/destinations/dst-on/deliveries?state=success', fields: ['state'] },
      {
        name: 'dead-letters cursor garbage',
        method: 'GET',
        path: '/destinations/dst-on/dead-letters?cursor=%3Cscript%3E',
        fields: ['cursor'],
      },
      {
        name: 'dead-letters cursor of digits only',
        method: 'GET',
        path: '/destinations/dst-on/dead-letters?cursor=12345',
        fields: ['cursor'],
      },
      { name: 'dead-letters limit=0', method: 'GET', path: '/destinations/dst-on/dead-letters?limit=0', fields: ['limit'] },
      { name: 'dead-letters limit=1001', method: 'GET', path: '/destinations/dst-on/dead-letters?limit=1001', fields: ['limit'] },
      {
        name: 'dead-letters status (not a parameter there)',
        method: 'GET',
        path: '/destinations/dst-on/dead-letters?status=failed',
        fields: ['status'],
      },
      { name: 'events limit=abc', method: 'GET', path: '/sources/src-a/events?limit=abc', fields: ['limit'] },
      { name: 'events cursor=abc', method: 'GET', path: '/sources/src-a/events?cursor=abc', fields: ['cursor'] },
      { name: 'audit limit=0', method: 'GET', path: '/audit?limit=0', fields: ['limit'] },
      { name: 'audit limit=1001', method: 'GET', path: '/audit?limit=1001', fields: ['limit'] },
      { name: 'audit cursor=abc', method: 'GET', path: '/audit?cursor=abc', fields: ['cursor'] },
      { name: 'audit cursor too long', method: 'GET', path: `/audit?cursor=${'1'.repeat(301)}`, fields: ['cursor'] },
      { name: 'audit limit given twice', method: 'GET', path: '/audit?limit=1&limit=2', fields: ['limit'] },
    ];

    it.each(cases)('$name → 400 naming $fields', async (c) => {
      expectInvalid(await f.refused(c), c.fields);
    });

    it('the limits at the edges are accepted', async () => {
      for (const path of [
        '/destinations/dst-on/deliveries?limit=1&status=failed',
        '/destinations/dst-on/deliveries?limit=1000',
        '/destinations/dst-on/dead-letters?limit=1',
        '/audit?limit=1000',
        '/sources/src-a/events?limit=1',
      ]) {
        const res = await f.admin().call('GET', path);
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
        expect(res.body).toEqual({ items: expect.any(Array), nextCursor: null });
      }
    });
  });

  describe('refused writes change nothing', () => {
    const f = fixture('val-nothing');

    it('a PATCH with one bad field among good ones is refused whole: GET shows the old state, the audit log has no entry', async () => {
      const admin = f.admin();
      const before = (await admin.call('GET', '/destinations/dst-off')).body;
      const auditBefore = (await admin.call('GET', '/audit')).body.items;
      const res = await f.refused({
        method: 'PATCH',
        path: '/destinations/dst-off',
        body: {
          enabled: true,
          sourceIds: ['src-b', 'ghost'],
          settings: { webhooks: [{ url: 'https://new.example.com/' }], sharedSecret: 'whsec_replacement_0000' },
        },
      });
      expectInvalid(res, ['sourceIds[1]']);
      expect((await admin.call('GET', '/destinations/dst-off')).body).toEqual(before);
      expect(before).toMatchObject({ enabled: false, sourceIds: ['src-a'], settings: { sharedSecret: { set: true, last4: '0001' } } });
      expect((await admin.call('GET', '/audit')).body.items).toEqual(auditBefore);
    });

    it('a refused source patch and a conflicting create change nothing', async () => {
      const admin = f.admin();
      const before = (await admin.call('GET', '/sources/src-b')).body;
      expectInvalid(await f.refused({ method: 'PATCH', path: '/sources/src-b', body: { name: 'New name', rateLimitPerSecond: -5 } }), [
        'rateLimitPerSecond',
      ]);
      expect((await admin.call('GET', '/sources/src-b')).body).toEqual(before);

      const conflict = await f.refused({ method: 'POST', path: '/sources', body: { id: 'src-b', name: 'Impostor', type: 'mobile' } });
      expect(conflict.status).toBe(409);
      expect(conflict.body.code).toBe('conflict');
      expect((await admin.call('GET', '/sources/src-b')).body).toEqual(before);
    });

    it('a destination create with a bad second webhook creates nothing', async () => {
      const admin = f.admin();
      const res = await f.refused({
        method: 'POST',
        path: '/destinations',
        body: { id: 'dst-half', name: 'Webhooks', settings: settings([hook(), { url: 'https://a:b@x.example.com/' }]) },
      });
      expectInvalid(res, ['settings.webhooks[1].url']);
      expect((await admin.call('GET', '/destinations/dst-half')).status).toBe(404);
    });

    it('replay on a disabled destination answers 409 conflict and audits nothing', async () => {
      const res = await f.refused({ method: 'POST', path: '/destinations/dst-off/replay', body: { all: true } });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ success: false, code: 'conflict', message: expect.any(String) });
      expect(res.body.message).toContain('disabled');
      const byIds = await f.refused({ method: 'POST', path: '/destinations/dst-off/replay', body: { messageIds: ['m-1'] } });
      expect(byIds.status).toBe(409);
    });
  });
});
