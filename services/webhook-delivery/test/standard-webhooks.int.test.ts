/**
 * Standard Webhooks signing as a real receiver checks it: each request is verified with the
 * official `standardwebhooks` package (the library receivers use), next to X-Signature, for a
 * `whsec_` and a raw secret, across a retry, during a secret rotation's overlap (rotated through
 * the admin API) and after it.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { callDeliveryId, verifySignature, type Destination } from '@eventrelay/config';
import { startReceiver, type ReceivedRequest, type Receiver } from '@eventrelay/testkit';
import { testScope } from '../../../test/support/scope';
import { startTestPipeline, trackCall, type TestPipeline } from '../../../test/support/pipeline';
import { startTestAdmin } from '../../../test/support/admin';

// 32 bytes in base64 after the prefix: the form rotate-secret generates.
const WHSEC = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwn3pZ2yb5Kv0=';
const NEXT = 'whsec_c2Vjb25kLXNlY3JldC1mb3ItdGhlLXJvdGF0aW9uISE=';
const RAW = 'a-raw-shared-secret-0001';
const FAST_RETRY = { DELIVERY_RETRY_BASE_MS: '50' };

function standardDestination(id: string, url: string, settings: Partial<Destination['settings']>): Destination {
  return {
    id,
    name: 'Webhooks',
    enabled: true,
    sourceIds: ['src-test'],
    settings: { webhooks: [{ url }], standardWebhooks: true, ...settings },
  };
}

/** The headers as the library takes them: one string per name. */
function headersOf(req: ReceivedRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') out[name] = value;
  return out;
}

/** What verification with `hook` says: the parsed payload, or the library's refusal. */
function verdict(hook: Webhook, req: ReceivedRequest): 'verified' | 'refused' {
  try {
    hook.verify(req.body, headersOf(req));
    return 'verified';
  } catch (err) {
    if (err instanceof WebhookVerificationError) return 'refused';
    throw err;
  }
}

describe('Standard Webhooks signatures, verified with the official library', () => {
  const scope = testScope();
  async function receiver(): Promise<Receiver> {
    return scope.track(await startReceiver());
  }
  async function pipeline(...args: Parameters<typeof startTestPipeline>): Promise<TestPipeline> {
    return scope.track(await startTestPipeline(...args));
  }

  it('verifies a delivery signed with a whsec_ secret, and one signed with a raw secret ({format: "raw"})', async () => {
    const a = await receiver();
    const b = await receiver();
    const p = await pipeline({
      label: 'sw-verify',
      destinations: [
        standardDestination('dst-whsec', a.url, { sharedSecret: WHSEC }),
        standardDestination('dst-raw', b.url, { sharedSecret: RAW }),
      ],
    });
    await p.route([trackCall('m-sw-1')]);
    const [whsec] = await a.waitFor(1);
    const [raw] = await b.waitFor(1);

    const payload = new Webhook(WHSEC).verify(whsec!.body, headersOf(whsec!));
    expect(payload).toEqual(JSON.parse(whsec!.body.toString('utf8')));
    expect(payload).toMatchObject({ type: 'track', event: 'Tested' });
    expect(verdict(new Webhook(RAW, { format: 'raw' }), raw!)).toBe('verified');
    // The same request under another secret, or with another body, does not verify.
    expect(verdict(new Webhook(NEXT), whsec!)).toBe('refused');
    expect(verdict(new Webhook(WHSEC), { ...whsec!, body: Buffer.from(whsec!.body.toString('utf8').replace('Tested', 'Forged')) })).toBe(
      'refused',
    );

    for (const [req, destinationId, secret] of [
      [whsec!, 'dst-whsec', WHSEC],
      [raw!, 'dst-raw', RAW],
    ] as const) {
      expect(req.headers['webhook-id']).toBe(callDeliveryId(destinationId, 'src-test', 'm-sw-1'));
      expect(Math.abs(Number(req.headers['webhook-timestamp']) - req.at / 1000)).toBeLessThan(5);
      // X-Signature is still there, as always, and no next signature outside a rotation.
      expect(verifySignature(secret, req.body, req.headers['x-signature'])).toBe(true);
      expect(req.headers['x-eventrelay-signature-next']).toBeUndefined();
    }
  });

  it('keeps webhook-id across a retry, with a fresh timestamp that verifies', async () => {
    const r = scope.track(await startReceiver({ responder: (_req, i) => ({ status: i === 0 ? 503 : 200 }) }));
    const p = await pipeline({
      label: 'sw-retry',
      destinations: [standardDestination('dst-retry', r.url, { sharedSecret: WHSEC })],
      deliveryEnv: FAST_RETRY,
      random: () => 0.999,
    });
    await p.route([trackCall('m-sw-retry')]);
    const [first, second] = await r.waitFor(2);
    expect(second!.headers['x-eventrelay-attempt']).toBe('2');
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(Number(second!.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(Number(first!.headers['webhook-timestamp']));
    expect([verdict(new Webhook(WHSEC), first!), verdict(new Webhook(WHSEC), second!)]).toEqual(['verified', 'verified']);
  });

  it('during a rotation overlap signs with both secrets: either verifies, X-Signature with the old, the next signature with the new', async () => {
    const r = await receiver();
    const p = await pipeline({ label: 'sw-rotate', destinations: [standardDestination('dst-rot', r.url, { sharedSecret: WHSEC })] });
    const admin = scope.track(await startTestAdmin({ prefix: p.prefix }));
    const rotated = await admin.call('POST', '/destinations/dst-rot/rotate-secret', { secret: NEXT, overlapMs: 3_600_000 });
    expect(rotated.status).toBe(200);
    await p.router.refreshConfig();
    await p.delivery!.refreshConfig();

    await p.route([trackCall('m-sw-rot')]);
    const [req] = await r.waitFor(1);
    expect(headersOf(req!)['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verdict(new Webhook(WHSEC), req!)).toBe('verified');
    expect(verdict(new Webhook(NEXT), req!)).toBe('verified');
    expect(verifySignature(WHSEC, req!.body, req!.headers['x-signature'])).toBe(true);
    expect(verifySignature(NEXT, req!.body, req!.headers['x-eventrelay-signature-next'])).toBe(true);
    expect(verifySignature(NEXT, req!.body, req!.headers['x-signature'])).toBe(false);
  });

  it('after the overlap has expired signs with the new secret only', async () => {
    const r = await receiver();
    const expired = { secret: WHSEC, expiresAt: new Date(Date.now() - 1000).toISOString() };
    const p = await pipeline({
      label: 'sw-expired',
      destinations: [standardDestination('dst-exp', r.url, { sharedSecret: NEXT, previousSecret: expired })],
    });
    await p.route([trackCall('m-sw-exp')]);
    const [req] = await r.waitFor(1);
    expect(headersOf(req!)['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(verdict(new Webhook(NEXT), req!)).toBe('verified');
    expect(verdict(new Webhook(WHSEC), req!)).toBe('refused');
    expect(verifySignature(NEXT, req!.body, req!.headers['x-signature'])).toBe(true);
    expect(req!.headers['x-eventrelay-signature-next']).toBeUndefined();
  });

  it('sends no webhook-* header without standardWebhooks', async () => {
    const a = await receiver();
    const b = await receiver();
    const p = await pipeline({
      label: 'sw-off',
      destinations: [
        {
          id: 'dst-plain',
          name: 'Webhooks',
          enabled: true,
          sourceIds: ['src-test'],
          settings: { webhooks: [{ url: a.url }], sharedSecret: WHSEC },
        },
        standardDestination('dst-false', b.url, { sharedSecret: WHSEC, standardWebhooks: false }),
      ],
    });
    await p.route([trackCall('m-sw-off')]);
    const [plain] = await a.waitFor(1);
    const [off] = await b.waitFor(1);
    for (const req of [plain!, off!]) {
      expect(Object.keys(req.headers).filter((name) => name.startsWith('webhook-'))).toEqual([]);
      expect(verifySignature(WHSEC, req.body, req.headers['x-signature'])).toBe(true);
    }
  });
});
