import {
  RequestError,
  audienceFingerprint,
  emptySnapshot,
  type PassState,
  type Audience,
  type AudienceCreate,
  type ConfigSnapshot,
  type Destination,
  type RegulationCreate,
  type Source,
} from '@eventrelay/config';
import { planCreateAudience, planDeleteAudience, toAudienceView } from './audiences.js';
import { planDeleteDestination } from './destinations.js';
import { planRegulation } from './regulations.js';
import { thrown } from '../../../../test/support/thrown';

const ctx = { tokenId: 'tok_12345678', now: '2026-11-21T10:00:00.000Z' };
const source = (id: string): Source => ({ id, name: id, type: 'server', writeKey: `wk_${id}_0000000` });
const destination = (id: string): Destination => ({
  id,
  name: 'Webhooks',
  enabled: true,
  sourceIds: ['s1'],
  settings: { webhooks: [{ url: `https://${id}.example/in` }] },
});
const trial: Audience = {
  id: 'a1',
  name: 'Trial Users',
  sourceIds: ['s1'],
  destinationIds: ['d1', 'd2'],
  condition: { trait: { key: 'plan', equals: 'trial' } },
};
const snapshot = (extra: Partial<ConfigSnapshot> = {}): ConfigSnapshot => ({
  ...emptySnapshot,
  sources: new Map([
    ['s1', source('s1')],
    ['s2', source('s2')],
  ]),
  destinations: new Map([
    ['d1', destination('d1')],
    ['d2', destination('d2')],
  ]),
  audiences: new Map([['a1', trial]]),
  ...extra,
});
const create = (extra: Partial<AudienceCreate> = {}): AudienceCreate => ({
  name: 'Paying Users',
  sourceIds: ['s1', 's2'],
  destinationIds: ['d1'],
  condition: { trait: { key: 'plan', equals: 'paid' } },
  ...extra,
});

const refusal = (run: () => unknown): RequestError => thrown(RequestError, run);

describe('planCreateAudience', () => {
  it('puts the audience under the generated id and audits its trait key', () => {
    const { result, changes, audit } = planCreateAudience(snapshot(), create(), 'aud_generated', ctx);
    expect(result).toEqual({ id: 'aud_generated', ...create() });
    expect(changes).toEqual([{ kind: 'put-audience', audience: result }]);
    expect(audit).toEqual([
      {
        at: ctx.now,
        tokenId: ctx.tokenId,
        action: 'audience.create',
        targetId: 'aud_generated',
        details: { traitKey: 'paying_users', sourceIds: ['s1', 's2'], destinationIds: ['d1'] },
      },
    ]);
  });

  it('uses the given id when there is one', () => {
    expect(planCreateAudience(snapshot(), create({ id: 'paying' }), 'aud_generated', ctx).result.id).toBe('paying');
  });

  it('refuses a taken id with conflict (409)', () => {
    const err = refusal(() => planCreateAudience(snapshot(), create({ id: 'a1' }), 'aud_generated', ctx));
    expect([err.code, err.httpStatus, err.fields]).toEqual(['conflict', 409, [{ field: 'id', message: 'is taken' }]]);
  });

  it('refuses unknown sources and destinations (400), naming each field', () => {
    const err = refusal(() => planCreateAudience(snapshot(), create({ sourceIds: ['s1', 'ghost'], destinationIds: ['gone'] }), 'x', ctx));
    expect([err.code, err.httpStatus]).toEqual(['invalid_request', 400]);
    expect(err.fields).toEqual([
      { field: 'sourceIds[1]', message: 'names no source ("ghost")' },
      { field: 'destinationIds[0]', message: 'names no destination ("gone")' },
    ]);
    expect(err.message).toBe('sourceIds[1] names no source ("ghost"); destinationIds[0] names no destination ("gone")');
  });

  it('refuses a name whose trait key an existing audience already has', () => {
    const err = refusal(() => planCreateAudience(snapshot(), create({ name: 'trial-users' }), 'x', ctx));
    expect([err.code, err.fields.map((f) => f.field)]).toEqual(['invalid_request', ['name']]);
    expect(err.message).toContain('"a1"');
  });
});

describe('planDeleteAudience', () => {
  it('deletes and audits, or refuses an unknown id', () => {
    expect(planDeleteAudience(snapshot(), 'a1', ctx)).toEqual({
      changes: [{ kind: 'delete-audience', id: 'a1' }],
      audit: [{ at: ctx.now, tokenId: ctx.tokenId, action: 'audience.delete', targetId: 'a1' }],
      result: undefined,
    });
    const err = refusal(() => planDeleteAudience(snapshot(), 'a9', ctx));
    expect([err.code, err.httpStatus]).toEqual(['not_found', 404]);
  });
});

describe('toAudienceView', () => {
  const current = audienceFingerprint(trial);
  const synced = Date.parse('2026-11-20T08:00:00.000Z');

  it('shows the stored pass when it is of the current definition', () => {
    const pass: PassState = { fingerprint: current, status: 'ready', scanned: 120, lastFullSyncAt: synced };
    expect(toAudienceView(trial, pass, 7)).toEqual({
      ...trial,
      traitKey: 'trial_users',
      membership: { status: 'ready', members: 7, profilesScanned: 120, lastFullSyncAt: '2026-11-20T08:00:00.000Z' },
    });
    expect(toAudienceView(trial, { fingerprint: current, status: 'backfilling', scanned: 3 }, 1).membership).toEqual({
      status: 'backfilling',
      members: 1,
      profilesScanned: 3,
    });
  });

  it('is pending when the stored pass is of an earlier definition, even if that one was ready', () => {
    const stale = audienceFingerprint({ ...trial, condition: { trait: { key: 'plan', equals: 'free' } } });
    const view = toAudienceView(trial, { fingerprint: stale, status: 'ready', scanned: 120 }, 7);
    expect(view.membership.status).toBe('pending');
    expect(view.membership).not.toHaveProperty('profilesScanned');
    expect(view.membership.members).toBe(7);
  });

  it('is pending with no pass at all, or a pass without a status', () => {
    expect(toAudienceView(trial, {}, 0).membership).toEqual({ status: 'pending', members: 0 });
    expect(toAudienceView(trial, { fingerprint: current }, 0).membership.status).toBe('pending');
  });

  it('gives the trait key of the name', () => {
    expect(toAudienceView({ ...trial, name: 'VIP-customers (EU)!' }, {}, 0).traitKey).toBe('vip_customers_eu');
  });
});

describe('planRegulation', () => {
  const request = (extra: Partial<RegulationCreate> = {}): RegulationCreate => ({
    regulationType: 'DELETE',
    subjectType: 'USER_ID',
    subjectIds: ['alice', 'bob'],
    ...extra,
  });

  it('gives the job and its pending record', () => {
    const { job, record } = planRegulation(snapshot(), request({ sourceIds: ['s2'] }), 'reg_1', ctx.now);
    expect(job).toEqual({ id: 'reg_1', createdAt: ctx.now, request: request({ sourceIds: ['s2'] }) });
    expect(record).toEqual({
      id: 'reg_1',
      regulationType: 'DELETE',
      subjectType: 'USER_ID',
      subjectCount: 2,
      sourceIds: ['s2'],
      status: 'pending',
      createdAt: ctx.now,
      counts: { subjectsDone: 0, deleteNotices: 0, profilesErased: 0 },
    });
    expect(planRegulation(snapshot(), request(), 'reg_2', ctx.now).record).not.toHaveProperty('sourceIds');
  });

  it('refuses unknown sources, naming each by its index', () => {
    const err = refusal(() => planRegulation(snapshot(), request({ sourceIds: ['s1', 'ghost', 'gone'] }), 'reg_1', ctx.now));
    expect(err.code).toBe('invalid_request');
    expect(err.fields).toEqual([
      { field: 'sourceIds[1]', message: 'names no source ("ghost")' },
      { field: 'sourceIds[2]', message: 'names no source ("gone")' },
    ]);
  });
});

describe('planDeleteDestination with audiences', () => {
  it('detaches the destination from every audience that lists it, and says so in the audit', () => {
    const other: Audience = { ...trial, id: 'a2', name: 'Other', destinationIds: ['d2'] };
    const third: Audience = { ...trial, id: 'a3', name: 'Third', destinationIds: ['d1'] };
    const { changes, audit } = planDeleteDestination(
      snapshot({
        audiences: new Map([
          ['a1', trial],
          ['a2', other],
          ['a3', third],
        ]),
      }),
      'd1',
      ctx,
    );
    expect(changes).toEqual([
      { kind: 'delete-destination', id: 'd1' },
      { kind: 'put-audience', audience: { ...trial, destinationIds: ['d2'] } },
      { kind: 'put-audience', audience: { ...third, destinationIds: [] } },
    ]);
    expect(audit).toEqual([
      { at: ctx.now, tokenId: ctx.tokenId, action: 'destination.delete', targetId: 'd1', details: { detachedFrom: ['a1', 'a3'] } },
    ]);
  });

  it('changes no audience and audits no details when none lists it', () => {
    const { changes, audit } = planDeleteDestination(snapshot({ audiences: new Map() }), 'd1', ctx);
    expect(changes).toEqual([{ kind: 'delete-destination', id: 'd1' }]);
    expect(audit).toEqual([{ at: ctx.now, tokenId: ctx.tokenId, action: 'destination.delete', targetId: 'd1' }]);
  });
});
