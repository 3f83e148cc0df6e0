import { createHmac } from 'node:crypto';
import { callDeliveryId, signBody, standardWebhooksKey, standardWebhooksSignature } from '../index.js';
import { USER_AGENT, buildHeaders, type SigningInput } from './headers.js';

const body = '{"version":1,"type":"track","event":"Tested"}';
const base = { body, messageId: 'msg-1', attempt: 2 };
// 2026-11-25T10:00:00.750Z: not a whole second, so the timestamp's rounding shows.
const now = Date.parse('2026-11-25T10:00:00.750Z');
const at = (ms: number) => new Date(ms).toISOString();
const signing = (extra: Partial<SigningInput> = {}): SigningInput => ({ destinationId: 'dst-1', sourceId: 'src-1', now, ...extra });
const current = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const old = 'the-old-secret-1234';

/** The Standard Webhooks v1 signature, computed here from the definition, not with our helper. */
function v1(secret: string, id: string, timestampSec: number, payload: string): string {
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSec}.${payload}`).digest('base64')}`;
}

describe('buildHeaders: signing options', () => {
  it('without standardWebhooks and without an overlap, sends exactly the headers it sent before them', () => {
    const expected = {
      'user-agent': USER_AGENT,
      'content-type': 'application/json',
      'x-signature': signBody(current, body),
      'x-eventrelay-message-id': 'msg-1',
      'x-eventrelay-attempt': '2',
    };
    const withoutSigning = buildHeaders({ ...base, sharedSecret: current });
    const withSigning = buildHeaders({ ...base, sharedSecret: current, signing: signing({ standardWebhooks: false }) });
    expect(withoutSigning).toEqual(expected);
    expect(withSigning).toEqual(expected);
    // Same names in the same order: the request goes out byte for byte as before.
    expect(Object.keys(withSigning)).toEqual(Object.keys(expected));
  });

  it('with standardWebhooks adds webhook-id (the call delivery id), webhook-timestamp (whole seconds) and a v1 signature', () => {
    const headers = buildHeaders({ ...base, sharedSecret: current, signing: signing({ standardWebhooks: true }) });
    const id = callDeliveryId('dst-1', 'src-1', 'msg-1');
    expect(headers['webhook-id']).toBe(id);
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(now / 1000)));
    expect(headers['webhook-timestamp']).toBe('1795600800');
    expect(headers['webhook-signature']).toBe(v1(current, id, 1795600800, body));
    expect(headers['webhook-signature']).toBe(standardWebhooksSignature(standardWebhooksKey(current), id, 1795600800, body));
    expect(headers['x-signature']).toBe(signBody(current, body));
    expect(headers['x-eventrelay-signature-next']).toBeUndefined();
  });

  it('signs a raw (non-whsec_) secret with its UTF-8 bytes as the key', () => {
    const headers = buildHeaders({ ...base, sharedSecret: old, signing: signing({ standardWebhooks: true }) });
    expect(headers['webhook-signature']).toBe(v1(old, callDeliveryId('dst-1', 'src-1', 'msg-1'), 1795600800, body));
  });

  it('keeps webhook-id across attempts and moves webhook-timestamp with the clock', () => {
    const first = buildHeaders({ ...base, attempt: 1, sharedSecret: current, signing: signing({ standardWebhooks: true }) });
    const later = buildHeaders({
      ...base,
      attempt: 5,
      sharedSecret: current,
      signing: signing({ standardWebhooks: true, now: now + 61_000 }),
    });
    expect(later['webhook-id']).toBe(first['webhook-id']);
    expect(Number(later['webhook-timestamp']) - Number(first['webhook-timestamp'])).toBe(61);
    expect(later['webhook-signature']).not.toBe(first['webhook-signature']);
  });

  it('gives different calls, sources and destinations different webhook-ids', () => {
    const id = (s: Partial<SigningInput>, messageId = 'msg-1') =>
      buildHeaders({ ...base, messageId, sharedSecret: current, signing: signing({ standardWebhooks: true, ...s }) })['webhook-id'];
    const ids = [id({}), id({}, 'msg-2'), id({ sourceId: 'src-2' }), id({ destinationId: 'dst-2' })];
    expect(new Set(ids).size).toBe(4);
  });

  it('sends no webhook-* header without a secret, even with standardWebhooks (settings refuse that)', () => {
    const headers = buildHeaders({ ...base, signing: signing({ standardWebhooks: true }) });
    expect(Object.keys(headers).filter((k) => k.startsWith('webhook-') || k.includes('signature'))).toEqual([]);
  });

  describe('during a rotation overlap', () => {
    const overlap = { secret: old, expiresAt: at(now + 1) };

    it('signs X-Signature with the previous secret and puts the new one in X-Eventrelay-Signature-Next', () => {
      const headers = buildHeaders({ ...base, sharedSecret: current, signing: signing({ previousSecret: overlap }) });
      expect(headers['x-signature']).toBe(signBody(old, body));
      expect(headers['x-eventrelay-signature-next']).toBe(signBody(current, body));
      expect(Object.keys(headers).some((k) => k.startsWith('webhook-'))).toBe(false);
      expect(Object.keys(headers)).toEqual([
        'user-agent',
        'content-type',
        'x-signature',
        'x-eventrelay-signature-next',
        'x-eventrelay-message-id',
        'x-eventrelay-attempt',
      ]);
    });

    it('carries both Standard Webhooks signatures, new first, space-separated', () => {
      const headers = buildHeaders({
        ...base,
        sharedSecret: current,
        signing: signing({ previousSecret: overlap, standardWebhooks: true }),
      });
      const id = callDeliveryId('dst-1', 'src-1', 'msg-1');
      expect(headers['webhook-signature']).toBe(`${v1(current, id, 1795600800, body)} ${v1(old, id, 1795600800, body)}`);
    });

    it('ends at expiresAt: from then on only the current secret signs', () => {
      for (const expiresAt of [at(now), at(now - 1), at(now - 86_400_000)]) {
        const headers = buildHeaders({
          ...base,
          sharedSecret: current,
          signing: signing({ previousSecret: { secret: old, expiresAt }, standardWebhooks: true }),
        });
        expect(headers['x-signature']).toBe(signBody(current, body));
        expect(headers['x-eventrelay-signature-next']).toBeUndefined();
        expect(headers['webhook-signature']).toBe(v1(current, headers['webhook-id']!, 1795600800, body));
      }
    });

    it('ignores a previous secret whose expiresAt does not parse, and one without a current secret', () => {
      const bad = buildHeaders({
        ...base,
        sharedSecret: current,
        signing: signing({ previousSecret: { secret: old, expiresAt: 'soon' } }),
      });
      expect(bad['x-signature']).toBe(signBody(current, body));
      expect(bad['x-eventrelay-signature-next']).toBeUndefined();
      const unsigned = buildHeaders({ ...base, signing: signing({ previousSecret: overlap }) });
      expect(Object.keys(unsigned).filter((k) => k.includes('signature'))).toEqual([]);
    });
  });

  it('drops static headers that would forge the Standard Webhooks headers or the next signature, in any case', () => {
    const headers = buildHeaders({
      ...base,
      staticHeaders: { 'Webhook-Id': 'x', 'WEBHOOK-TIMESTAMP': '1', 'webhook-signature': 'v1,forged', 'X-Eventrelay-Signature-Next': 'f' },
    });
    expect(headers).toEqual({
      'user-agent': USER_AGENT,
      'content-type': 'application/json',
      'x-eventrelay-message-id': 'msg-1',
      'x-eventrelay-attempt': '2',
    });
  });
});
