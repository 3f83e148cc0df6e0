/**
 * The delivery settings of issue 21 through the planners: merge-patching them, the per-URL
 * disabled state, and rotating the shared secret with an overlap.
 */
import { RequestError, emptySnapshot, type ConfigSnapshot, type Destination, type DestinationPatch } from '@eventrelay/config';
import { DEFAULT_SECRET_OVERLAP_MS, planPatchDestination, planRotateSecret } from './destinations';
import { toDestinationView } from './destination-view';
import { thrown } from '../../../../test/support/thrown';

const NOW = '2026-11-25T10:00:00.000Z';
const ctx = { tokenId: 'tok_12345678', now: NOW };
const later = (ms: number) => new Date(Date.parse(NOW) + ms).toISOString();
const A = 'https://a.example/in';
const B = 'https://b.example/in';
const tuned: Destination = {
  id: 'd1',
  name: 'Webhooks',
  enabled: true,
  sourceIds: [],
  settings: {
    webhooks: [
      { url: A, headers: { Authorization: 'Bearer a-token' } },
      { url: B, disabled: true, disabledReason: 'answered 410 Gone at 2026-11-24T08:00:00.000Z' },
    ],
    sharedSecret: 'current-secret-1234',
    previousSecret: { secret: 'previous-secret-5678', expiresAt: later(60_000) },
    standardWebhooks: true,
    timeoutMs: 8000,
    retryWindowMs: 3_600_000,
    maxConcurrentRequests: 16,
    maxRequestsPerSecond: 50,
    autoDisableAfterMs: 86_400_000,
  },
};
const snapshot = (destination: Destination = tuned): ConfigSnapshot => ({
  ...emptySnapshot,
  destinations: new Map([[destination.id, destination]]),
});
const patched = (patch: DestinationPatch, destination: Destination = tuned) =>
  planPatchDestination(snapshot(destination), destination.id, patch, ctx).result.settings;
const refusal = (run: () => unknown): RequestError => thrown(RequestError, run);

describe('planPatchDestination: delivery settings', () => {
  const NUMERIC = ['timeoutMs', 'retryWindowMs', 'maxConcurrentRequests', 'maxRequestsPerSecond', 'autoDisableAfterMs'] as const;

  it('keeps every setting a patch leaves out', () => {
    expect(patched({ enabled: false })).toEqual(tuned.settings);
    expect(patched({ settings: { timeoutMs: 9000 } })).toEqual({ ...tuned.settings, timeoutMs: 9000 });
  });

  it.each(NUMERIC)('replaces %s when given and removes it (back to the default) on null', (key) => {
    const value = {
      timeoutMs: 2000,
      retryWindowMs: 120_000,
      maxConcurrentRequests: 3,
      maxRequestsPerSecond: 7,
      autoDisableAfterMs: 600_000,
    }[key];
    expect(patched({ settings: { [key]: value } })[key]).toBe(value);
    const removed = patched({ settings: { [key]: null } });
    expect(removed).not.toHaveProperty(key);
    expect(removed).toEqual(Object.fromEntries(Object.entries(tuned.settings).filter(([k]) => k !== key)));
  });

  it('sets standardWebhooks, and removes it on null', () => {
    const off = { ...tuned, settings: { webhooks: [{ url: A }], sharedSecret: 'current-secret-1234' } };
    expect(patched({ settings: { standardWebhooks: true } }, off).standardWebhooks).toBe(true);
    expect(patched({ settings: { standardWebhooks: false } }).standardWebhooks).toBe(false);
    expect(patched({ settings: { standardWebhooks: null } })).not.toHaveProperty('standardWebhooks');
  });

  it('ends an overlap on previousSecret: null, keeping the current secret', () => {
    const settings = patched({ settings: { previousSecret: null } });
    expect(settings).not.toHaveProperty('previousSecret');
    expect(settings.sharedSecret).toBe('current-secret-1234');
  });

  it('removes the previous secret with the secret (sharedSecret: null)', () => {
    const settings = patched({ settings: { sharedSecret: null, standardWebhooks: null } });
    expect(settings).not.toHaveProperty('sharedSecret');
    expect(settings).not.toHaveProperty('previousSecret');
  });

  it('drops a previous secret whose overlap has ended at any write', () => {
    const expired = { ...tuned, settings: { ...tuned.settings, previousSecret: { secret: 'previous-secret-5678', expiresAt: NOW } } };
    expect(patched({ enabled: true }, expired)).not.toHaveProperty('previousSecret');
  });

  it('refuses settings that break the rules, naming the field (standardWebhooks needs a secret)', () => {
    const err = refusal(() => patched({ settings: { sharedSecret: null } }));
    expect(err.code).toBe('invalid_request');
    expect(err.fields).toEqual([{ field: 'settings.standardWebhooks', message: 'needs a sharedSecret to sign with' }]);
    const plain = { ...tuned, settings: { webhooks: [{ url: A }] } };
    expect(refusal(() => patched({ settings: { standardWebhooks: true } }, plain)).fields.map((f) => f.field)).toEqual([
      'settings.standardWebhooks',
    ]);
  });

  it('audits the names of the settings patched, never their values', () => {
    const { audit } = planPatchDestination(
      snapshot(),
      'd1',
      { settings: { previousSecret: null, timeoutMs: null, standardWebhooks: false } },
      ctx,
    );
    expect(audit?.[0]?.details).toEqual({ fields: ['settings.previousSecret', 'settings.timeoutMs', 'settings.standardWebhooks'] });
    expect(JSON.stringify(audit)).not.toContain('secret-');
  });
});

describe('planPatchDestination: a URL’s disabled state', () => {
  it('keeps the disabled state stored for the same URL when a webhook is given without it', () => {
    const webhooks = patched({ settings: { webhooks: [{ url: A }, { url: B, headers: { 'X-New': 'v' } }] } }).webhooks;
    expect(webhooks).toEqual([
      { url: A },
      { url: B, headers: { 'X-New': 'v' }, disabled: true, disabledReason: 'answered 410 Gone at 2026-11-24T08:00:00.000Z' },
    ]);
  });

  it('re-enables a URL on disabled: false, clearing the reason even when the client sends it back', () => {
    const reason = tuned.settings.webhooks[1]!.disabledReason!;
    expect(patched({ settings: { webhooks: [{ url: B, disabled: false }] } }).webhooks).toEqual([{ url: B }]);
    expect(patched({ settings: { webhooks: [{ url: B, disabled: false, disabledReason: reason }] } }).webhooks).toEqual([{ url: B }]);
  });

  it('disables a URL on disabled: true, with the reason given or the one stored', () => {
    expect(patched({ settings: { webhooks: [{ url: A, disabled: true, disabledReason: 'maintenance' }] } }).webhooks).toEqual([
      { url: A, disabled: true, disabledReason: 'maintenance' },
    ]);
    expect(patched({ settings: { webhooks: [{ url: A, disabled: true }] } }).webhooks).toEqual([{ url: A, disabled: true }]);
    expect(patched({ settings: { webhooks: [{ url: B, disabled: true }] } }).webhooks).toEqual([tuned.settings.webhooks[1]]);
    expect(patched({ settings: { webhooks: [{ url: B, disabledReason: 'gone for good' }] } }).webhooks).toEqual([
      { url: B, disabled: true, disabledReason: 'gone for good' },
    ]);
  });

  it('forgets the state of a URL left out: added again later, it is enabled', () => {
    const without = planPatchDestination(snapshot(), 'd1', { settings: { webhooks: [{ url: A }] } }, ctx).result;
    expect(patched({ settings: { webhooks: [{ url: A }, { url: B }] } }, without).webhooks).toEqual([{ url: A }, { url: B }]);
  });

  it('refuses a reason for a URL that is not disabled, naming the field', () => {
    const err = refusal(() => patched({ settings: { webhooks: [{ url: A, disabledReason: 'why' }] } }));
    expect(err.fields).toEqual([
      {
        field: 'settings.webhooks[0].disabledReason',
        message: `describes a disabled URL, and ${A} is not disabled; send "disabled": true with it`,
      },
    ]);
  });

  it('shows the disabled state in the view', () => {
    expect(toDestinationView(tuned).settings.webhooks[1]).toEqual({
      url: B,
      disabled: true,
      disabledReason: 'answered 410 Gone at 2026-11-24T08:00:00.000Z',
    });
  });
});

describe('planRotateSecret', () => {
  const signed: Destination = {
    ...tuned,
    settings: { webhooks: [{ url: A }], sharedSecret: 'current-secret-1234', standardWebhooks: true },
  };
  const rotate = (destination: Destination, rotation: { secret?: string; overlapMs?: number } = {}) =>
    planRotateSecret(snapshot(destination), destination.id, rotation, 'whsec_Z2VuZXJhdGVkLXNlY3JldC0wMDA=', ctx);

  it('signs with the new secret and keeps the current one signing for 24 h by default', () => {
    const { result, changes, audit } = rotate(signed, { secret: 'the-new-secret-0001' });
    expect(DEFAULT_SECRET_OVERLAP_MS).toBe(86_400_000);
    expect(result.secret).toBe('the-new-secret-0001');
    expect(result.previousExpiresAt).toBe('2026-11-26T10:00:00.000Z');
    expect(result.destination.settings).toEqual({
      webhooks: [{ url: A }],
      sharedSecret: 'the-new-secret-0001',
      previousSecret: { secret: 'current-secret-1234', expiresAt: '2026-11-26T10:00:00.000Z' },
      standardWebhooks: true,
    });
    expect(changes).toEqual([{ kind: 'put-destination', destination: result.destination }]);
    expect(audit).toEqual([
      { at: NOW, tokenId: ctx.tokenId, action: 'destination.secret_rotated', targetId: 'd1', details: { overlapMs: 86_400_000 } },
    ]);
  });

  it('uses the generated secret when none is given', () => {
    expect(rotate(signed).result.secret).toBe('whsec_Z2VuZXJhdGVkLXNlY3JldC0wMDA=');
    expect(rotate(signed).result.destination.settings.sharedSecret).toBe('whsec_Z2VuZXJhdGVkLXNlY3JldC0wMDA=');
  });

  it('takes the overlap given, and with 0 replaces the secret at once', () => {
    expect(rotate(signed, { overlapMs: 60_000 }).result.previousExpiresAt).toBe(later(60_000));
    const { result, audit } = rotate(signed, { overlapMs: 0 });
    expect(result).not.toHaveProperty('previousExpiresAt');
    expect(result.destination.settings).not.toHaveProperty('previousSecret');
    expect(audit?.[0]?.details).toEqual({ overlapMs: 0 });
  });

  it('just sets the secret when there is none yet', () => {
    const unsigned = { ...signed, settings: { webhooks: [{ url: A }] } };
    const { result, audit } = rotate(unsigned, { overlapMs: 60_000 });
    expect(result.destination.settings).toEqual({ webhooks: [{ url: A }], sharedSecret: 'whsec_Z2VuZXJhdGVkLXNlY3JldC0wMDA=' });
    expect(result).not.toHaveProperty('previousExpiresAt');
    expect(audit?.[0]?.details).toEqual({ overlapMs: 0 });
  });

  it('during an overlap, replaces the previous secret with the current one', () => {
    const { result } = rotate(tuned, { secret: 'the-third-secret-0003', overlapMs: 120_000 });
    expect(result.destination.settings.previousSecret).toEqual({ secret: 'current-secret-1234', expiresAt: later(120_000) });
    expect(JSON.stringify(result.destination)).not.toContain('previous-secret-5678');
    // Everything else is kept.
    expect(result.destination.settings.webhooks).toEqual(tuned.settings.webhooks);
    expect(result.destination.settings.timeoutMs).toBe(8000);
  });

  it('never puts a secret in the audit entry', () => {
    const { audit } = rotate(tuned, { secret: 'the-third-secret-0003' });
    expect(JSON.stringify(audit)).not.toMatch(/secret-|whsec_/);
  });

  it('refuses the current secret as the new one, naming the field, and an unknown id', () => {
    const err = refusal(() => rotate(signed, { secret: 'current-secret-1234' }));
    expect([err.code, err.fields]).toEqual(['invalid_request', [{ field: 'secret', message: 'is the current secret; give a new one' }]]);
    expect(refusal(() => planRotateSecret(snapshot(signed), 'nope', {}, 'whsec_x', ctx)).code).toBe('not_found');
  });
});
