/**
 * Where a webhook may not go: https receivers whose certificate does not verify, and addresses the
 * SSRF guard refuses (docs/spec.md §4). Certificates are made with openssl here; made-up hostnames
 * reach 127.0.0.1 through an injected resolver.
 */
import type { LookupAddress } from 'node:dns';
import type { DeliveryAttempt } from '@eventrelay/config';
import type { Resolver } from '../src/adapters/address-guard';
import { makeCertificates, type TestCertificates } from '../../../test/support/certs';
import { eventually, type Receiver, startReceiver, sleep } from '@eventrelay/testkit';
import { testScope } from '../../../test/support/scope';
import { startTestPipeline, trackCall, webhookDestination, type PipelineOptions, type TestPipeline } from '../../../test/support/pipeline';

const random = () => 0.999;
const FAST_RETRY = { DELIVERY_RETRY_BASE_MS: '50' };
/** Allowed networks that do not cover loopback (nor anything else on this machine). */
const NOT_LOOPBACK = '10.99.0.0/16';
const MADE_UP_HOST = 'hooks.example.test';
/** Longer than any backoff these tests can schedule. */
const SETTLE_MS = 500;

/** Maps the given names onto addresses and records every lookup; any other name does not exist. */
function fakeResolver(
  names: Record<string, LookupAddress[] | ((call: number) => LookupAddress[])>,
): Resolver & { readonly lookups: string[] } {
  const lookups: string[] = [];
  const resolver = (hostname: string) => {
    lookups.push(hostname);
    const entry = names[hostname];
    if (entry === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
    return Promise.resolve(typeof entry === 'function' ? entry(lookups.filter((h) => h === hostname).length) : entry);
  };
  return Object.assign(resolver, { lookups });
}

const LOCALHOST_V4: LookupAddress[] = [{ address: '127.0.0.1', family: 4 }];

describe('tls and the SSRF guard', () => {
  let certs: TestCertificates;
  const scope = testScope();

  beforeAll(() => {
    certs = makeCertificates();
  });
  afterAll(() => certs?.cleanup());
  async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
    return scope.track(await startReceiver(...args));
  }
  async function pipeline(options: PipelineOptions): Promise<TestPipeline> {
    // Opened after its receivers, so closed before them.
    return scope.track(await startTestPipeline({ random, ...options, deliveryEnv: { ...FAST_RETRY, ...options.deliveryEnv } }));
  }
  async function deadLetterOf(p: TestPipeline, destinationId: string) {
    return eventually(async () => {
      const letters = await p.deadLetters(destinationId);
      expect(letters).toHaveLength(1);
      return letters[0]!;
    });
  }
  /** The oldest entry of the attempt log, once there is one. */
  async function firstAttemptOf(p: TestPipeline, destinationId: string): Promise<DeliveryAttempt> {
    return eventually(async () => {
      const found = await p.attempts(destinationId);
      expect(found.length).toBeGreaterThan(0);
      return found[found.length - 1]!;
    });
  }
  async function attemptsOf(p: TestPipeline, destinationId: string, count: number): Promise<DeliveryAttempt[]> {
    return eventually(async () => {
      const found = await p.attempts(destinationId);
      expect(found).toHaveLength(count);
      return [...found].reverse();
    });
  }

  describe('https receivers', () => {
    // The receivers' URLs name localhost (the certificates are for it); it is pinned to 127.0.0.1
    // so the tests do not depend on this machine's hosts file.
    const resolver = () => fakeResolver({ localhost: LOCALHOST_V4 });

    it('a self-signed certificate: permanent tls failure, the receiver sees no request, dead letter', async () => {
      const r = await receiver({ tls: certs.selfSigned });
      const p = await pipeline({ label: 'tls-self', destinations: [webhookDestination('dest-1', [r.url])], resolver: resolver() });
      await p.route([trackCall('m-self-signed')]);

      const attempt = await firstAttemptOf(p, 'dest-1');
      expect(attempt).toMatchObject({ url: r.url, attempt: 1, outcome: 'permanent' });
      expect(attempt.status).toBeUndefined();
      expect(attempt.error).toMatch(/^tls_untrusted: .*self[- ]signed/i);
      const letter = await deadLetterOf(p, 'dest-1');
      expect(letter.lastError).toMatch(/tls_untrusted/);
      expect(letter.attempts).toBe(1);

      await sleep(SETTLE_MS);
      expect(r.requests).toEqual([]);
      expect(await p.attempts('dest-1')).toHaveLength(1);
    });

    it('a CA-signed certificate without WEBHOOK_CA_FILE does not verify either', async () => {
      const r = await receiver({ tls: certs.caSigned });
      const p = await pipeline({ label: 'tls-ca-missing', destinations: [webhookDestination('dest-1', [r.url])], resolver: resolver() });
      await p.route([trackCall('m-ca-missing')]);

      const attempt = await firstAttemptOf(p, 'dest-1');
      expect(attempt).toMatchObject({ url: r.url, attempt: 1, outcome: 'permanent' });
      expect(attempt.error).toMatch(/^tls_untrusted: /);
      const letter = await deadLetterOf(p, 'dest-1');
      expect(letter.lastError).toMatch(/tls_untrusted/);
      expect(r.requests).toEqual([]);
    });

    it('a CA-signed certificate with WEBHOOK_CA_FILE naming the CA: delivered', async () => {
      const r = await receiver({ tls: certs.caSigned });
      const p = await pipeline({
        label: 'tls-ca',
        destinations: [webhookDestination('dest-1', [r.url])],
        deliveryEnv: { WEBHOOK_CA_FILE: certs.caFile },
        resolver: resolver(),
      });
      await p.route([trackCall('m-ca-signed')]);

      const [req] = await r.waitFor(1);
      expect(req!.headers['x-eventrelay-message-id']).toBe('m-ca-signed');
      const [attempt] = await attemptsOf(p, 'dest-1', 1);
      expect(attempt).toMatchObject({ url: r.url, attempt: 1, outcome: 'success', status: 200 });
      expect(await p.deadLetters('dest-1')).toEqual([]);
    });
  });

  describe('SSRF guard', () => {
    async function expectRefusedAsLoopback(p: TestPipeline, r: Receiver, url: string): Promise<void> {
      const letter = await deadLetterOf(p, 'dest-1');
      expect(letter.lastError).toMatch(/loopback/);
      expect(letter.lastError).toContain('address_refused');
      expect(letter.urls).toEqual([{ url, error: expect.stringMatching(/loopback/) }]);
      const [attempt] = await attemptsOf(p, 'dest-1', 1);
      expect(attempt).toMatchObject({ url, attempt: 1, outcome: 'permanent' });
      expect(attempt!.error).toMatch(/loopback/);

      await sleep(SETTLE_MS);
      expect(r.requests).toEqual([]);
      expect(await p.attempts('dest-1')).toHaveLength(1);
    }

    it('refuses an IPv4 loopback literal that WEBHOOK_ALLOWED_NETWORKS does not cover, sending nothing', async () => {
      const r = await receiver();
      const url = `http://127.0.0.1:${r.port}/`;
      const p = await pipeline({
        label: 'ssrf-literal',
        destinations: [webhookDestination('dest-1', [url])],
        deliveryEnv: { WEBHOOK_ALLOWED_NETWORKS: NOT_LOOPBACK },
      });
      await p.route([trackCall('m-ssrf-literal')]);
      await expectRefusedAsLoopback(p, r, url);
    });

    it('refuses a hostname that resolves to loopback, sending nothing', async () => {
      const r = await receiver();
      const url = `http://${MADE_UP_HOST}:${r.port}/`;
      const resolver = fakeResolver({ [MADE_UP_HOST]: LOCALHOST_V4 });
      const p = await pipeline({
        label: 'ssrf-name',
        destinations: [webhookDestination('dest-1', [url])],
        deliveryEnv: { WEBHOOK_ALLOWED_NETWORKS: NOT_LOOPBACK },
        resolver,
      });
      await p.route([trackCall('m-ssrf-name')]);
      await expectRefusedAsLoopback(p, r, url);
      expect(resolver.lookups).toContain(MADE_UP_HOST);
    });

    it('delivers to the same made-up hostname when loopback is allowed: the resolved address is the one connected to', async () => {
      const r = await receiver();
      const url = `http://${MADE_UP_HOST}:${r.port}/made-up`;
      const resolver = fakeResolver({ [MADE_UP_HOST]: LOCALHOST_V4 });
      // The pipeline's default WEBHOOK_ALLOWED_NETWORKS allows 127.0.0.0/8.
      const p = await pipeline({ label: 'ssrf-allowed', destinations: [webhookDestination('dest-1', [url])], resolver });
      await p.route([trackCall('m-ssrf-allowed')]);

      const [req] = await r.waitFor(1);
      expect(req!.path).toBe('/made-up');
      expect(req!.headers['host']).toBe(`${MADE_UP_HOST}:${r.port}`);
      expect(req!.headers['x-eventrelay-message-id']).toBe('m-ssrf-allowed');
      expect(resolver.lookups).toContain(MADE_UP_HOST);
      const [attempt] = await attemptsOf(p, 'dest-1', 1);
      expect(attempt).toMatchObject({ url, outcome: 'success', status: 200 });
    });

    it('a DNS answer that changes to loopback (rebinding) is vetted again and refused, never connected to', async () => {
      const r = await receiver();
      const url = `http://${MADE_UP_HOST}:${r.port}/`;
      // The first answer is an allowed address where nothing listens (so that attempt is retried);
      // later answers point at the receiver on 127.0.0.1, which is not allowed.
      const resolver = fakeResolver({ [MADE_UP_HOST]: (n) => (n === 1 ? [{ address: '127.0.0.2', family: 4 }] : LOCALHOST_V4) });
      const p = await pipeline({
        label: 'ssrf-rebind',
        destinations: [webhookDestination('dest-1', [url])],
        deliveryEnv: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.2/32' },
        resolver,
      });
      await p.route([trackCall('m-ssrf-rebind')]);

      const letter = await deadLetterOf(p, 'dest-1');
      expect(letter.lastError).toMatch(/address_refused: .*127\.0\.0\.1.*loopback/);
      const attempts = await attemptsOf(p, 'dest-1', 2);
      expect(attempts[0]).toMatchObject({ attempt: 1, outcome: 'retryable' });
      expect(attempts[0]!.error).toMatch(/^connection_refused: .*ECONNREFUSED/);
      expect(attempts[1]).toMatchObject({ attempt: 2, outcome: 'permanent' });
      expect(attempts[1]!.error).toMatch(/loopback/);
      expect(resolver.lookups.filter((h) => h === MADE_UP_HOST).length).toBeGreaterThanOrEqual(2);
      await sleep(SETTLE_MS);
      expect(r.requests).toEqual([]);
    });

    it('refuses an IPv4-mapped IPv6 literal of loopback when loopback is not allowed', async () => {
      const r = await receiver();
      const url = `http://[::ffff:127.0.0.1]:${r.port}/`;
      const p = await pipeline({
        label: 'ssrf-mapped',
        destinations: [webhookDestination('dest-1', [url])],
        deliveryEnv: { WEBHOOK_ALLOWED_NETWORKS: NOT_LOOPBACK },
      });
      await p.route([trackCall('m-ssrf-mapped')]);
      await expectRefusedAsLoopback(p, r, url);
    });
  });
});
