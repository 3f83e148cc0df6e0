/**
 * The headers of docs/spec.md §4 as a real receiver sees them: fixed ones, static ones per URL,
 * the message id and the attempt number across a retry.
 */
import { verifySignature } from '@eventrelay/config';
import { eventually, type Receiver, startReceiver } from '@eventrelay/testkit';
import { testScope } from '../../../test/support/scope';
import { startTestPipeline, trackCall, webhookDestination, type TestPipeline } from '../../../test/support/pipeline';

// Retries come after at most ~50 ms, so the retry test stays fast.
const FAST_RETRY = { DELIVERY_RETRY_BASE_MS: '50' };
const random = () => 0.999;

describe('webhook request headers', () => {
  const scope = testScope();
  async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
    return scope.track(await startReceiver(...args));
  }
  async function pipeline(...args: Parameters<typeof startTestPipeline>): Promise<TestPipeline> {
    // Opened after its receivers, so closed before them.
    return scope.track(await startTestPipeline(...args));
  }

  it('sends User-Agent Eventrelay/1.0, Content-Type application/json, the message id and attempt 1', async () => {
    const r = await receiver();
    const p = await pipeline({ label: 'headers-fixed', destinations: [webhookDestination('dest-h', [r.url])] });
    await p.route([trackCall('m-fixed-1')]);
    const [req] = await r.waitFor(1);
    expect(req!.method).toBe('POST');
    expect(req!.path).toBe('/hook');
    expect(req!.headers['user-agent']).toBe('Eventrelay/1.0');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['x-eventrelay-message-id']).toBe('m-fixed-1');
    expect(req!.headers['x-eventrelay-attempt']).toBe('1');
    expect(req!.headers['content-length']).toBe(String(req!.body.length));
    // The body is JSON, as the Content-Type says.
    expect(JSON.parse(req!.body.toString('utf8'))).toMatchObject({ type: 'track', event: 'Tested' });
  });

  it('sends each URL its own static headers and no other URL’s', async () => {
    const a = await receiver();
    const b = await receiver();
    const p = await pipeline({
      label: 'headers-static',
      destinations: [
        webhookDestination('dest-s', [
          { url: a.url, headers: { Authorization: 'Bearer token-a', 'X-Team': 'alpha' } },
          { url: b.url, headers: { 'X-Api-Key': 'key-b', 'X-Region': 'eu-1' } },
        ]),
      ],
    });
    await p.route([trackCall('m-static-1')]);
    const [reqA] = await a.waitFor(1);
    const [reqB] = await b.waitFor(1);

    expect(reqA!.headers['authorization']).toBe('Bearer token-a');
    expect(reqA!.headers['x-team']).toBe('alpha');
    expect(reqA!.headers['x-api-key']).toBeUndefined();
    expect(reqA!.headers['x-region']).toBeUndefined();

    expect(reqB!.headers['x-api-key']).toBe('key-b');
    expect(reqB!.headers['x-region']).toBe('eu-1');
    expect(reqB!.headers['authorization']).toBeUndefined();
    expect(reqB!.headers['x-team']).toBeUndefined();

    // The fixed headers are there as well, beside the static ones.
    for (const req of [reqA!, reqB!]) {
      expect(req.headers['user-agent']).toBe('Eventrelay/1.0');
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.headers['x-eventrelay-message-id']).toBe('m-static-1');
      expect(req.headers['x-eventrelay-attempt']).toBe('1');
    }
  });

  it('numbers attempts 1 then 2 on a retry, with the same message id, body and signature', async () => {
    const r = await receiver({ responder: (_req, i) => ({ status: i === 0 ? 503 : 200 }) });
    const p = await pipeline({
      label: 'headers-attempt',
      destinations: [webhookDestination('dest-a', [r.url], { sharedSecret: 'attempt-secret' })],
      deliveryEnv: FAST_RETRY,
      random,
    });
    await p.route([trackCall('m-attempt-1')]);
    const [first, second] = await r.waitFor(2);
    expect(first!.headers['x-eventrelay-attempt']).toBe('1');
    expect(second!.headers['x-eventrelay-attempt']).toBe('2');
    expect(first!.headers['x-eventrelay-message-id']).toBe('m-attempt-1');
    expect(second!.headers['x-eventrelay-message-id']).toBe('m-attempt-1');
    expect(second!.body.equals(first!.body)).toBe(true);
    expect(second!.headers['x-signature']).toBe(first!.headers['x-signature']);
    expect(verifySignature('attempt-secret', second!.body, second!.headers['x-signature'])).toBe(true);

    const attempts = await eventually(async () => {
      const found = await p.attempts('dest-a');
      expect(found).toHaveLength(2);
      return found;
    });
    expect(attempts.map((a) => [a.attempt, a.outcome, a.status])).toEqual([
      [2, 'success', 200],
      [1, 'retryable', 503],
    ]);
  });
});
