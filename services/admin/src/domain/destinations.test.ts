import { RequestError, emptySnapshot, type ConfigSnapshot, type Destination, type Source } from '@eventrelay/config';
import { destinationProblems, planCreateDestination, planDeleteDestination, planPatchDestination } from './destinations';
import { toDestinationView } from './destination-view';
import { planCreateSource, planDeleteSource, planPatchSource, planRotateWriteKey } from './sources';
import { thrown } from '../../../../test/support/thrown';

const ctx = { tokenId: 'tok_12345678', now: '2026-11-21T10:00:00.000Z' };
const source = (id: string): Source => ({ id, name: id, type: 'server', writeKey: `wk_${id}_0000000` });
const hooks: Destination = {
  id: 'd1',
  name: 'Webhooks',
  enabled: true,
  sourceIds: ['s1'],
  settings: { webhooks: [{ url: 'https://a.example/in', headers: { 'X-A': '1' } }], sharedSecret: 'old-secret-1234' },
};
const snapshot = (extra: Partial<ConfigSnapshot> = {}): ConfigSnapshot => ({
  ...emptySnapshot,
  sources: new Map([
    ['s1', source('s1')],
    ['s2', source('s2')],
  ]),
  destinations: new Map([['d1', hooks]]),
  ...extra,
});

const refusal = (run: () => unknown): RequestError => thrown(RequestError, run);

describe('planPatchDestination (JSON merge patch)', () => {
  it('keeps the secret when the patch leaves it out, removes it on null, replaces it on a string', () => {
    expect(planPatchDestination(snapshot(), 'd1', { enabled: false }, ctx).result.settings.sharedSecret).toBe('old-secret-1234');
    expect(planPatchDestination(snapshot(), 'd1', { settings: { sharedSecret: null } }, ctx).result.settings).not.toHaveProperty(
      'sharedSecret',
    );
    expect(planPatchDestination(snapshot(), 'd1', { settings: { sharedSecret: 'new' } }, ctx).result.settings.sharedSecret).toBe('new');
  });

  it('replaces webhooks and sourceIds as whole lists and leaves the rest', () => {
    const { result, changes, audit } = planPatchDestination(
      snapshot(),
      'd1',
      { sourceIds: ['s2'], settings: { webhooks: [{ url: 'https://b.example' }] } },
      ctx,
    );
    expect(result).toEqual({
      ...hooks,
      sourceIds: ['s2'],
      settings: { webhooks: [{ url: 'https://b.example' }], sharedSecret: 'old-secret-1234' },
    });
    expect(changes).toEqual([{ kind: 'put-destination', destination: result }]);
    expect(audit).toEqual([
      {
        at: ctx.now,
        tokenId: ctx.tokenId,
        action: 'destination.update',
        targetId: 'd1',
        details: { fields: ['sourceIds', 'settings.webhooks'] },
      },
    ]);
  });

  it('refuses an unknown id and a result that breaks the rules, naming the field', () => {
    expect(refusal(() => planPatchDestination(snapshot(), 'nope', { enabled: true }, ctx)).code).toBe('not_found');
    const err = refusal(() =>
      planPatchDestination(
        snapshot(),
        'd1',
        { sourceIds: ['s1', 'ghost'], settings: { webhooks: [{ url: 'https://u:p@a.example', headers: { Host: 'x' } }] } },
        ctx,
      ),
    );
    expect(err.code).toBe('invalid_request');
    expect(err.fields.map((f) => f.field).sort()).toEqual([
      'settings.webhooks[0].headers.Host',
      'settings.webhooks[0].url',
      'sourceIds[1]',
    ]);
  });

  it('never puts the secret in the audit entry', () => {
    const { audit } = planPatchDestination(snapshot(), 'd1', { settings: { sharedSecret: 'brand-new-secret' } }, ctx);
    expect(JSON.stringify(audit)).not.toContain('brand-new-secret');
  });
});

describe('planCreateDestination', () => {
  it('starts disabled with no sources unless told, under the given or the generated id', () => {
    const made = planCreateDestination(
      snapshot(),
      { name: 'Webhooks', settings: { webhooks: [{ url: 'http://x.example' }] } },
      'dst_generated',
      ctx,
    ).result;
    expect(made).toEqual({
      id: 'dst_generated',
      name: 'Webhooks',
      enabled: false,
      sourceIds: [],
      settings: { webhooks: [{ url: 'http://x.example' }] },
    });
    expect(
      planCreateDestination(
        snapshot(),
        { id: 'mine', name: 'Webhooks', enabled: true, settings: { webhooks: [{ url: 'http://x.example' }] } },
        'dst_generated',
        ctx,
      ).result.id,
    ).toBe('mine');
  });

  it('refuses a taken id with conflict', () => {
    const err = refusal(() =>
      planCreateDestination(snapshot(), { id: 'd1', name: 'Webhooks', settings: { webhooks: [{ url: 'http://x.example' }] } }, 'x', ctx),
    );
    expect([err.code, err.fields]).toEqual(['conflict', [{ field: 'id', message: 'is taken' }]]);
  });
});

describe('destinationProblems', () => {
  it('reports every X-Eventrelay- header, reserved or not yet used', () => {
    const d = { ...hooks, settings: { webhooks: [{ url: 'https://a', headers: { 'x-eventrelay-future': 'v', 'X-Custom': 'ok' } }] } };
    expect(destinationProblems(d, snapshot())).toEqual([
      {
        field: 'settings.webhooks[0].headers.x-eventrelay-future',
        message: 'may not be set: eventrelay or the HTTP connection controls that header',
      },
    ]);
  });
});

describe('planDeleteDestination', () => {
  it('deletes, or refuses an unknown id', () => {
    expect(planDeleteDestination(snapshot(), 'd1', ctx).changes).toEqual([{ kind: 'delete-destination', id: 'd1' }]);
    expect(refusal(() => planDeleteDestination(snapshot(), 'd9', ctx)).code).toBe('not_found');
  });
});

describe('sources', () => {
  it('create uses the generated write key and refuses a taken id', () => {
    const { result } = planCreateSource(
      snapshot(),
      { name: 'App', type: 'web', rateLimitPerSecond: 9 },
      { id: 'src_x', writeKey: 'wk_generated_key' },
      ctx,
    );
    expect(result).toEqual({ id: 'src_x', name: 'App', type: 'web', writeKey: 'wk_generated_key', rateLimitPerSecond: 9 });
    expect(refusal(() => planCreateSource(snapshot(), { id: 's1', name: 'A', type: 'web' }, { id: 'x', writeKey: 'k' }, ctx)).code).toBe(
      'conflict',
    );
  });

  it('patch with rateLimitPerSecond null goes back to the default', () => {
    const limited = snapshot({ sources: new Map([['s1', { ...source('s1'), rateLimitPerSecond: 5 }]]) });
    expect(planPatchSource(limited, 's1', { rateLimitPerSecond: null, name: 'Renamed' }, ctx).result).toEqual({
      ...source('s1'),
      name: 'Renamed',
    });
  });

  it('keeps a memoryShare given on create, and a patch with memoryShare null goes back to the default of its type', () => {
    const { result } = planCreateSource(
      snapshot(),
      { name: 'Site', type: 'web', memoryShare: 0.25 },
      { id: 'src_m', writeKey: 'wk_m' },
      ctx,
    );
    expect(result).toEqual({ id: 'src_m', name: 'Site', type: 'web', writeKey: 'wk_m', memoryShare: 0.25 });
    const shared = snapshot({ sources: new Map([['s1', { ...source('s1'), memoryShare: 0.5, rateLimitPerSecond: 5 }]]) });
    expect(planPatchSource(shared, 's1', { memoryShare: null }, ctx).result).toEqual({ ...source('s1'), rateLimitPerSecond: 5 });
    expect(planPatchSource(shared, 's1', { memoryShare: 0.05 }, ctx).result).toEqual({
      ...source('s1'),
      memoryShare: 0.05,
      rateLimitPerSecond: 5,
    });
  });

  it('rotation unmaps the old write key', () => {
    expect(planRotateWriteKey(snapshot(), 's1', 'wk_new_key_000', ctx).changes).toEqual([
      { kind: 'put-source', source: { ...source('s1'), writeKey: 'wk_new_key_000' }, previousWriteKey: 'wk_s1_0000000' },
    ]);
  });

  it('delete disconnects the source from destinations and audiences', () => {
    const audience = { id: 'a1', name: 'A', sourceIds: ['s1', 's2'], destinationIds: ['d1'], condition: {} };
    const { changes, audit } = planDeleteSource(snapshot({ audiences: new Map([['a1', audience]]) }), 's1', ctx);
    expect(changes).toEqual([
      { kind: 'delete-source', source: source('s1') },
      { kind: 'put-destination', destination: { ...hooks, sourceIds: [] } },
      { kind: 'put-audience', audience: { ...audience, sourceIds: ['s2'] } },
    ]);
    expect(audit?.[0]?.details).toEqual({ detachedFrom: ['d1'], detachedFromAudiences: ['a1'] });
  });
});

describe('toDestinationView', () => {
  it('shows only whether a secret is set and, from 8 characters on, its last 4', () => {
    expect(toDestinationView(hooks).settings.sharedSecret).toEqual({ set: true, last4: '1234' });
    expect(toDestinationView({ ...hooks, settings: { ...hooks.settings, sharedSecret: 'short' } }).settings.sharedSecret).toEqual({
      set: true,
    });
    expect(toDestinationView({ ...hooks, settings: { webhooks: hooks.settings.webhooks } }).settings.sharedSecret).toEqual({ set: false });
    expect(JSON.stringify(toDestinationView(hooks))).not.toContain('old-secret');
  });
});
