import { callDeliveryId, type Audience, type Destination } from '@eventrelay/config';
import { audienceSourceId, desiredMembership, membershipCall, membershipDeliveries, type Transition } from './membership.js';
import { parseProfile, type Profile } from './profile.js';

const NOW = Date.parse('2026-11-21T10:00:00.000Z');

const audience = (extra: Partial<Audience> = {}): Audience => ({
  id: 'aud_trial',
  name: 'Trial Users 2',
  sourceIds: ['web'],
  destinationIds: ['d-on', 'd-off', 'd-gone', 'd-on-2'],
  condition: { trait: { key: 'plan', equals: 'trial' } },
  ...extra,
});

const destination = (id: string, enabled: boolean): Destination => ({
  id,
  name: 'Webhooks',
  enabled,
  sourceIds: [],
  settings: { webhooks: [{ url: `https://${id}.example/in` }] },
});
const destinations = new Map<string, Destination>([
  ['d-on', destination('d-on', true)],
  ['d-off', destination('d-off', false)],
  ['d-on-2', destination('d-on-2', true)],
  ['d-unlisted', destination('d-unlisted', true)],
]);

const transition = (extra: Partial<Transition> = {}): Transition => ({
  audienceId: 'aud_trial',
  userId: 'user-1',
  member: true,
  transitionId: 'tr-42',
  at: Date.parse('2026-11-21T10:00:00.123Z'),
  ...extra,
});

function profileOf(fields: Record<string, string>): Profile {
  return parseProfile('user-1', { v: '1', ...fields })!;
}

describe('desiredMembership', () => {
  const trial = audience();
  const notPaying = audience({ id: 'aud_not_paying', name: 'Not Paying', condition: { not: { trait: { key: 'plan', equals: 'paid' } } } });

  it('puts a user without a profile in no audience', () => {
    expect(desiredMembership(undefined, [trial, notPaying], NOW)).toEqual([
      { audienceId: 'aud_trial', member: false },
      { audienceId: 'aud_not_paying', member: false },
    ]);
  });

  it('evaluates each audience against its own sources', () => {
    const p = profileOf({ 'ta:web': '1', 't:web:plan': '"trial"' });
    expect(desiredMembership(p, [trial, notPaying], NOW)).toEqual([
      { audienceId: 'aud_trial', member: true },
      { audienceId: 'aud_not_paying', member: true },
    ]);
    expect(desiredMembership(p, [audience({ sourceIds: ['api'] })], NOW)).toEqual([{ audienceId: 'aud_trial', member: false }]);
  });

  it('keeps out a user known only from other sources, even from a `not` audience', () => {
    const p = profileOf({ 'ta:api': '1', 't:api:plan': '"free"', 'e:api:Ping': '3' });
    expect(desiredMembership(p, [notPaying, audience({ condition: { not: { event: { name: 'Ping' } } } })], NOW)).toEqual([
      { audienceId: 'aud_not_paying', member: false },
      { audienceId: 'aud_trial', member: false },
    ]);
  });

  it('gives nothing for no audiences', () => {
    expect(desiredMembership(profileOf({ 't:web:plan': '"trial"' }), [], NOW)).toEqual([]);
  });
});

describe('membershipCall', () => {
  it.each([true, false])('is an identify setting the snake_case trait to %s, in the Personas shape', (member) => {
    expect(membershipCall(audience(), transition({ member }))).toEqual({
      type: 'identify',
      messageId: 'aud-tr-42',
      userId: 'user-1',
      traits: { trial_users_2: member },
      context: { personas: { computation_class: 'audience', computation_id: 'aud_trial', computation_key: 'trial_users_2' } },
      timestamp: '2026-11-21T10:00:00.123Z',
      receivedAt: '2026-11-21T10:00:00.123Z',
    });
  });

  it('gives the timestamp as ISO 8601 UTC with milliseconds, even when they are zero', () => {
    expect(membershipCall(audience(), transition({ at: Date.UTC(2026, 0, 2, 3, 4, 5) })).timestamp).toBe('2026-01-02T03:04:05.000Z');
  });
});

describe('membershipDeliveries', () => {
  it('delivers only to the enabled destinations the audience lists (not disabled, deleted or unlisted ones)', () => {
    const planned = membershipDeliveries(audience(), transition(), destinations);
    expect(planned.map((p) => p.destinationId)).toEqual(['d-on', 'd-on-2']);
  });

  it('delivers the membership call under the audience source id, with the usual delivery job ids', () => {
    const t = transition();
    const call = membershipCall(audience(), t);
    expect(audienceSourceId('aud_trial')).toBe('audience:aud_trial');
    expect(membershipDeliveries(audience(), t, destinations)).toEqual([
      { jobId: callDeliveryId('d-on', 'audience:aud_trial', 'aud-tr-42'), sourceId: 'audience:aud_trial', destinationId: 'd-on', call },
      { jobId: callDeliveryId('d-on-2', 'audience:aud_trial', 'aud-tr-42'), sourceId: 'audience:aud_trial', destinationId: 'd-on-2', call },
    ]);
  });

  it('plans the same job ids for the same transition, other ones for another transition', () => {
    const ids = (t: Transition) => membershipDeliveries(audience(), t, destinations).map((p) => p.jobId);
    expect(ids(transition())).toEqual(ids(transition()));
    expect(ids(transition({ transitionId: 'tr-43' }))).not.toEqual(ids(transition()));
    expect(new Set([...ids(transition()), ...ids(transition({ transitionId: 'tr-43' }))]).size).toBe(4);
  });

  it('plans nothing when no listed destination is enabled', () => {
    expect(membershipDeliveries(audience({ destinationIds: ['d-off', 'd-gone'] }), transition(), destinations)).toEqual([]);
    expect(membershipDeliveries(audience({ destinationIds: [] }), transition(), destinations)).toEqual([]);
  });
});
