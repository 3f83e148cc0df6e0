/**
 * Destination filters, mappings and batched sending through the real pipeline (docs/filters.md):
 * calls sent to the intake; real receivers see which calls arrive, what their bodies hold and
 * whether their signatures verify; the admin's preview gives the bytes a delivery then sends.
 */
import type { Destination } from '@eventrelay/config';
import { eventually, startReceiver, type ReceivedRequest, type Receiver } from '@eventrelay/testkit';
import { startTestAdmin, type TestAdmin } from '../support/admin';
import { startTestPipeline, webhookDestination, type TestPipeline } from '../support/pipeline';

const SECRET = 'filters-e2e-secret';
const MAPPING = {
  kind: { '@template': '{{type}}:{{event}}' },
  user: { '@coalesce': [{ '@path': 'userId' }, { '@path': 'anonymousId' }] },
  plan: { '@coalesce': [{ '@path': 'properties.plan' }, 'free'] },
  total: { '@path': 'properties.total' },
  big: { '@if': { field: { path: 'properties.total', gte: 100 } }, then: true, else: false },
  raw: { '@literal': { '@keep': 'as is' } },
};

const calls = [
  { type: 'track', event: 'Order Completed', userId: 'u-1', properties: { total: 120, plan: 'pro', email: 'a@example.com' } },
  { type: 'track', event: 'Order Refunded', userId: 'u-2', properties: { total: 30, test: true } },
  { type: 'track', event: 'Signed Up', anonymousId: 'anon-3', properties: { email: 'c@example.com' } },
  { type: 'identify', userId: 'u-4', traits: { plan: 'free', email: 'd@example.com' } },
  { type: 'page', userId: 'u-5', name: 'Home', properties: { path: '/' } },
].map((call, i) => ({
  ...call,
  messageId: `m-${i + 1}`,
  timestamp: '2026-11-27T10:00:00.000Z',
  context: { ip: '203.0.113.9', library: { name: 'filters-e2e', version: '1.0' } },
}));

const messageIds = (r: Receiver) => r.requests.map((q) => q.headers['x-eventrelay-message-id']).sort();
const json = (q: ReceivedRequest) => JSON.parse(q.body.toString('utf8'));

describe('destination filters, mappings and batches through the pipeline', () => {
  const receivers: Record<string, Receiver> = {};
  let pipeline: TestPipeline;
  let admin: TestAdmin;
  let destinations: Destination[];

  beforeAll(async () => {
    for (const name of ['all', 'drop', 'only', 'fields', 'keep', 'mapped', 'batched'])
      receivers[name] = await startReceiver({ secret: SECRET });
    const url = (name: string) => receivers[name]!.url;
    const hook = (id: string, extra: Partial<Destination> = {}) => webhookDestination(id, [url(id)], { sharedSecret: SECRET, ...extra });
    destinations = [
      hook('all'),
      // properties.test is not in a route entry: the router reads the calls themselves.
      hook('drop', { filters: [{ name: 'no test calls', drop: { field: { path: 'properties.test', equals: true } } }] }),
      // type and event are in the route entries: no read of the calls.
      hook('only', {
        filters: [
          { only: { field: { path: 'type', in: ['track'] } } },
          { name: 'orders', only: { field: { path: 'event', matches: 'Order *' } } },
        ],
      }),
      hook('fields', { filters: [{ dropFields: ['properties.email', 'traits.email', 'context.ip'] }] }),
      hook('keep', {
        filters: [{ keepFields: ['properties.total', 'context.library.name'], if: { field: { path: 'type', equals: 'track' } } }],
      }),
      { ...hook('mapped'), settings: { webhooks: [{ url: url('mapped') }], sharedSecret: SECRET, mapping: MAPPING } },
      { ...hook('batched'), settings: { webhooks: [{ url: url('batched') }], sharedSecret: SECRET, batching: { maxCalls: 2 } } },
    ];
    pipeline = await startTestPipeline({ label: 'filters-e2e', ingest: true, destinations });
    admin = await startTestAdmin({ prefix: pipeline.prefix });
    const res = await fetch(`${pipeline.ingestUrl}/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${pipeline.writeKey}:`).toString('base64')}` },
      body: JSON.stringify({ batch: calls }),
    });
    expect(res.status).toBe(200);
    await receivers['all']!.waitFor(5);
    await receivers['fields']!.waitFor(5);
    await receivers['mapped']!.waitFor(5);
  });
  afterAll(async () => {
    await admin?.close();
    await pipeline?.close();
    for (const r of Object.values(receivers)) await r.close();
  });

  it('drop and only rules decide which calls arrive', async () => {
    await receivers['drop']!.waitFor(4);
    await receivers['only']!.waitFor(2);
    // Everything else was delivered meanwhile: whatever was to come has come.
    await receivers['batched']!.waitFor(3);
    expect(messageIds(receivers['all']!)).toEqual(['m-1', 'm-2', 'm-3', 'm-4', 'm-5']);
    expect(messageIds(receivers['drop']!)).toEqual(['m-1', 'm-3', 'm-4', 'm-5']);
    expect(messageIds(receivers['only']!)).toEqual(['m-1', 'm-2']);
    const metrics = await (await fetch(`http://127.0.0.1:${pipeline.router.port}/metrics`)).text();
    const count = (reason: string) =>
      Number(new RegExp(`eventrelay_router_filtered_total\\{[^}]*reason="${reason}"[^}]*\\} (\\d+)`).exec(metrics)?.[1]);
    expect(count('filter_drop')).toBe(1);
    // m-4 and m-5 fail the first only rule; m-3 the second.
    expect(count('filter_only')).toBe(3);
  });

  it('dropped fields are absent from the delivered body, and the signature covers what was sent', () => {
    const bodies = receivers['fields']!.requests.map(json);
    expect(bodies).toHaveLength(5);
    for (const body of bodies) {
      expect(body.properties?.email).toBeUndefined();
      expect(body.traits?.email).toBeUndefined();
      expect(body.context.ip).toBeUndefined();
      expect(body.context.library).toEqual({ name: 'filters-e2e', version: '1.0' });
    }
    expect(bodies.find((b) => b.event === 'Order Completed').properties).toEqual({ total: 120, plan: 'pro' });
    expect(receivers['fields']!.requests.every((q) => q.signatureValid === true)).toBe(true);
  });

  it('keepFields keeps only the listed fields of the calls its `if` holds for', () => {
    const byId = new Map(receivers['keep']!.requests.map((q) => [q.headers['x-eventrelay-message-id'], json(q)]));
    expect(byId.get('m-1').properties).toEqual({ total: 120 });
    expect(byId.get('m-1').context).toEqual({ library: { name: 'filters-e2e' } });
    // A listed object stays, with none of its fields when none listed is there.
    expect(byId.get('m-3').properties).toEqual({});
    // Not a track call: untouched.
    expect(byId.get('m-4').traits).toEqual({ plan: 'free', email: 'd@example.com' });
    expect(byId.get('m-4').context.ip).toBe('203.0.113.9');
  });

  it('a mapped destination receives the templated body, signed', () => {
    const byId = new Map(receivers['mapped']!.requests.map((q) => [q.headers['x-eventrelay-message-id'], q]));
    expect(byId.get('m-1')!.body.toString()).toBe(
      '{"kind":"track:Order Completed","user":"u-1","plan":"pro","total":120,"big":true,"raw":{"@keep":"as is"}}',
    );
    expect(json(byId.get('m-3')!)).toEqual({
      kind: 'track:Signed Up',
      user: 'anon-3',
      plan: 'free',
      big: false,
      raw: { '@keep': 'as is' },
    });
    expect(json(byId.get('m-4')!)).toEqual({ kind: 'identify:', user: 'u-4', plan: 'free', big: false, raw: { '@keep': 'as is' } });
    expect(receivers['mapped']!.requests.every((q) => q.signatureValid === true)).toBe(true);
  });

  it('a batched destination receives JSON arrays of at most maxCalls bodies, signed', async () => {
    await receivers['batched']!.waitFor(3);
    const posts = receivers['batched']!.requests;
    expect(posts).toHaveLength(3);
    const arrays = posts.map(json);
    expect(arrays.every((a) => Array.isArray(a) && a.length >= 1 && a.length <= 2)).toBe(true);
    // Each default body names its call, first: the POST's id names the group, which retries can change.
    expect(
      arrays
        .flat()
        .map((b: { messageId: string }) => b.messageId)
        .sort(),
    ).toEqual(['m-1', 'm-2', 'm-3', 'm-4', 'm-5']);
    expect(posts.every((q) => q.body.toString().startsWith('[{"messageId":"m-'))).toBe(true);
    expect(
      arrays
        .flat()
        .map((b: { type: string }) => b.type)
        .sort(),
    ).toEqual(['identify', 'page', 'track', 'track', 'track']);
    expect(posts.map((q) => Number(q.headers['x-eventrelay-batch-size']))).toEqual(arrays.map((a) => a.length));
    expect(posts.every((q) => q.signatureValid === true)).toBe(true);
    // Each call's own attempt is recorded, with the POST's outcome.
    const attempts = await eventually(async () => {
      const logged = await pipeline.attempts('batched');
      expect(logged).toHaveLength(5);
      return logged;
    });
    expect(attempts.every((a) => a.outcome === 'success')).toBe(true);
  });

  it('preview returns exactly the body and signature a delivery sent', async () => {
    let compared = 0;
    for (const id of ['mapped', 'fields', 'keep', 'all', 'batched']) {
      for (const call of calls) {
        const delivered = receivers[id]!.requests.find((q) => q.headers['x-eventrelay-message-id'] === call.messageId);
        if (!delivered) continue; // batched: the POSTs carry groups, compared below
        const answer = await admin.call('POST', `/destinations/${id}/preview`, { call, sourceId: 'src-test' });
        expect(answer.status).toBe(200);
        expect(answer.body.decision).toEqual({ send: true });
        const [request] = answer.body.requests;
        expect(Buffer.from(request.body, 'utf8').equals(delivered.body)).toBe(true);
        expect(request.headers['x-signature']).toBe(delivered.headers['x-signature']);
        expect(request.headers['x-eventrelay-message-id']).toBe(call.messageId);
        compared++;
      }
    }
    expect(compared).toBe(20);
    // A batched destination: each call's body in the preview's one-call array is the item delivered.
    const items = receivers['batched']!.requests.flatMap((q) => json(q) as { messageId: string }[]);
    for (const call of calls) {
      const answer = await admin.call('POST', '/destinations/batched/preview', { call, sourceId: 'src-test' });
      expect(JSON.parse(answer.body.requests[0].body)).toEqual([items.find((i) => i.messageId === call.messageId)]);
    }
  });

  it('preview names the rule that refused a call, for a saved destination and for one not saved', async () => {
    const saved = await admin.call('POST', '/destinations/only/preview', { call: calls[2] });
    expect(saved.body).toMatchObject({ decision: { send: false, rule: 1, name: 'orders', reason: 'only' }, requests: [] });
    const unsaved = await admin.call('POST', '/destinations/preview', {
      call: { type: 'track', event: 'Signed Up', userId: 'u-9' },
      destination: {
        name: 'Webhooks',
        settings: { webhooks: [{ url: 'https://receiver.example/in' }], batching: {} },
        filters: [{ drop: { field: { path: 'event', starts_with: 'Order' } } }],
      },
    });
    expect(unsaved.status).toBe(200);
    expect(unsaved.body.decision).toEqual({ send: true });
    expect(unsaved.body.call).toMatchObject({ type: 'track', messageId: expect.any(String), timestamp: expect.any(String) });
    const [request] = unsaved.body.requests;
    expect(request.url).toBe('https://receiver.example/in');
    expect(JSON.parse(request.body)).toEqual([expect.objectContaining({ type: 'track', event: 'Signed Up', userId: 'u-9' })]);
    expect(request.headers['x-eventrelay-batch-size']).toBe('1');
    // Nothing was saved.
    expect((await admin.call('GET', '/destinations')).body).toHaveLength(destinations.length);
  });

  it('refuses filters and mappings that are wrong, naming the field', async () => {
    const answer = await admin.call('PATCH', '/destinations/all', {
      filters: [{ drop: { field: { path: 'properties..plan', equals: 'x' } }, only: { field: { path: 'type', equals: 'track' } } }],
      settings: { mapping: { '@path': 'properties' } },
    });
    expect(answer.status).toBe(400);
    const fields = answer.body.fields.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['filters[0]', 'settings.mapping']));
  });
});
