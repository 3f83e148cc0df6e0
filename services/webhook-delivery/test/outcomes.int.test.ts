/**
 * The outcome table of docs/spec.md §4 against real receivers: what is retried, what fails a URL
 * for good, what is dead-lettered, and how several URLs of one destination play together.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DeliveryAttempt } from '@eventrelay/config';
import { eventually, freePort, type Receiver, startReceiver, sleep } from '@eventrelay/testkit';
import { testScope } from '../../../test/support/scope';
import { startTestPipeline, trackCall, webhookDestination, type PipelineOptions, type TestPipeline } from '../../../test/support/pipeline';

/**
 * With random() = 0.999 the backoff after round n is just under BASE * 2^(n-1) ms, so retries
 * come quickly and at known times.
 */
const BASE_MS = 100;
const random = () => 0.999;
/** Longer than any backoff these tests can schedule before they look for a retry that must not come. */
const BEYOND_BACKOFF_MS = 8 * BASE_MS;

describe('delivery outcomes', () => {
  const scope = testScope();
  async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
    return scope.track(await startReceiver(...args));
  }
  async function pipeline(options: PipelineOptions): Promise<TestPipeline> {
    // Opened after its receivers, so closed before them.
    return scope.track(
      await startTestPipeline({ random, ...options, deliveryEnv: { DELIVERY_RETRY_BASE_MS: String(BASE_MS), ...options.deliveryEnv } }),
    );
  }
  /** The attempt log, oldest first, once it holds `count` entries. */
  async function attemptsOf(p: TestPipeline, destinationId: string, count: number): Promise<DeliveryAttempt[]> {
    return eventually(async () => {
      const found = await p.attempts(destinationId);
      expect(found).toHaveLength(count);
      return [...found].reverse();
    });
  }
  async function deadLetterOf(p: TestPipeline, destinationId: string, timeoutMs?: number) {
    return eventually(async () => {
      const letters = await p.deadLetters(destinationId);
      expect(letters).toHaveLength(1);
      return letters[0]!;
    }, timeoutMs);
  }

  it('503 then 200: retried once and delivered exactly once, both attempts logged', async () => {
    const r = await receiver({ responder: (_req, i) => ({ status: i === 0 ? 503 : 200 }) });
    const p = await pipeline({ label: 'out-503', destinations: [webhookDestination('dest-1', [r.url])] });
    await p.route([trackCall('m-503')]);
    const [first, second] = await r.waitFor(2);
    expect(first!.headers['x-eventrelay-attempt']).toBe('1');
    expect(second!.headers['x-eventrelay-attempt']).toBe('2');

    const attempts = await attemptsOf(p, 'dest-1', 2);
    expect(attempts[0]).toMatchObject({ messageId: 'm-503', url: r.url, attempt: 1, outcome: 'retryable', status: 503, error: 'HTTP 503' });
    expect(attempts[1]).toMatchObject({ messageId: 'm-503', url: r.url, attempt: 2, outcome: 'success', status: 200 });
    expect(attempts[1]!.error).toBeUndefined();

    await sleep(BEYOND_BACKOFF_MS);
    expect(r.requests).toHaveLength(2);
    expect((await p.attempts('dest-1')).filter((a) => a.outcome === 'success')).toHaveLength(1);
    expect(await p.deadLetters('dest-1')).toEqual([]);
  });

  it('a receiver that answers only after 6 s: the attempt times out, is logged as a timeout, and the retry is delivered', async () => {
    // Default DELIVERY_TIMEOUT_MS (5000).
    const r = await receiver({ responder: (_req, i) => (i === 0 ? { status: 200, delayMs: 6000 } : { status: 200 }) });
    const p = await pipeline({ label: 'out-timeout', destinations: [webhookDestination('dest-1', [r.url])] });
    await p.route([trackCall('m-slow')]);
    const [, second] = await r.waitFor(2, 20_000);
    expect(second!.headers['x-eventrelay-attempt']).toBe('2');

    const attempts = await attemptsOf(p, 'dest-1', 2);
    expect(attempts[0]).toMatchObject({ attempt: 1, outcome: 'retryable' });
    expect(attempts[0]!.status).toBeUndefined();
    expect(attempts[0]!.error).toMatch(/timeout/i);
    expect(attempts[0]!.latencyMs).toBeGreaterThanOrEqual(4900);
    expect(attempts[1]).toMatchObject({ attempt: 2, outcome: 'success', status: 200 });
    expect(await p.deadLetters('dest-1')).toEqual([]);
  }, 30_000);

  it('a receiver that sends 200 headers and then stalls the body: a timeout, not a success', async () => {
    let requests = 0;
    const stalled: http.ServerResponse[] = [];
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        requests++;
        res.writeHead(200, { 'content-type': 'text/plain' });
        if (requests === 1) {
          res.write('partial');
          stalled.push(res);
        } else res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    scope.track({ close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const p = await pipeline({
      label: 'out-stall',
      destinations: [webhookDestination('dest-1', [url])],
      deliveryEnv: { DELIVERY_TIMEOUT_MS: '1000' },
    });
    await p.route([trackCall('m-stall')]);
    const attempts = await attemptsOf(p, 'dest-1', 2);
    expect(attempts[0]).toMatchObject({ attempt: 1, outcome: 'retryable' });
    expect(attempts[0]!.error).toMatch(/^timeout: /);
    expect(attempts[1]).toMatchObject({ attempt: 2, outcome: 'success', status: 200 });
    expect(stalled).toHaveLength(1);
  });

  it('404: a permanent failure, not retried, dead-lettered with the error', async () => {
    const r = await receiver({ responder: () => ({ status: 404 }) });
    const p = await pipeline({ label: 'out-404', destinations: [webhookDestination('dest-1', [r.url])] });
    await p.route([trackCall('m-404')]);
    await r.waitFor(1);

    const letter = await deadLetterOf(p, 'dest-1');
    expect(letter.lastError).toContain('HTTP 404');
    expect(letter.attempts).toBe(1);
    expect(letter.job).toMatchObject({ sourceId: 'src-test', destinationId: 'dest-1', call: { messageId: 'm-404' } });
    expect(letter.job).not.toHaveProperty('retry');
    expect(letter.urls).toEqual([{ url: r.url, error: 'HTTP 404' }]);
    const [attempt] = await attemptsOf(p, 'dest-1', 1);
    expect(attempt).toMatchObject({ attempt: 1, outcome: 'permanent', status: 404 });

    await sleep(BEYOND_BACKOFF_MS);
    expect(r.requests).toHaveLength(1);
    expect(await p.attempts('dest-1')).toHaveLength(1);
  });

  it('429 with Retry-After: 2: the next attempt comes at least 2 s after the first', async () => {
    const r = await receiver({ responder: (_req, i) => (i === 0 ? { status: 429, headers: { 'Retry-After': '2' } } : { status: 200 }) });
    const p = await pipeline({ label: 'out-429', destinations: [webhookDestination('dest-1', [r.url])] });
    await p.route([trackCall('m-429')]);
    const [first, second] = await r.waitFor(2, 10_000);
    // The backoff alone would have retried after under 100 ms.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(2000);
    expect(second!.headers['x-eventrelay-attempt']).toBe('2');

    const attempts = await attemptsOf(p, 'dest-1', 2);
    expect(attempts[0]).toMatchObject({ attempt: 1, outcome: 'retryable', status: 429 });
    expect(attempts[1]).toMatchObject({ attempt: 2, outcome: 'success', status: 200 });
  });

  it('302 to another receiver: the redirect is not followed, the URL fails permanently, dead letter', async () => {
    const elsewhere = await receiver();
    const r = await receiver({ responder: () => ({ status: 302, headers: { Location: elsewhere.url } }) });
    const p = await pipeline({ label: 'out-302', destinations: [webhookDestination('dest-1', [r.url])] });
    await p.route([trackCall('m-302')]);
    await r.waitFor(1);

    const letter = await deadLetterOf(p, 'dest-1');
    expect(letter.lastError).toContain('HTTP 302');
    expect(letter.lastError).toMatch(/redirect/i);
    const [attempt] = await attemptsOf(p, 'dest-1', 1);
    expect(attempt).toMatchObject({ attempt: 1, outcome: 'permanent', status: 302 });

    await sleep(BEYOND_BACKOFF_MS);
    expect(elsewhere.requests).toHaveLength(0);
    expect(r.requests).toHaveLength(1);
  });

  it('three URLs, one answering 200: the message is processed and no URL is retried', async () => {
    const failing = await receiver({ responder: () => ({ status: 500 }) });
    const ok = await receiver({ responder: () => ({ status: 200 }) });
    const gone = await receiver({ responder: () => ({ status: 404 }) });
    const p = await pipeline({ label: 'out-multi', destinations: [webhookDestination('dest-1', [failing.url, ok.url, gone.url])] });
    await p.route([trackCall('m-multi')]);
    await Promise.all([failing.waitFor(1), ok.waitFor(1), gone.waitFor(1)]);

    const attempts = await attemptsOf(p, 'dest-1', 3);
    const byUrl = new Map(attempts.map((a) => [a.url, a]));
    expect(byUrl.get(failing.url)).toMatchObject({ attempt: 1, outcome: 'retryable', status: 500 });
    expect(byUrl.get(ok.url)).toMatchObject({ attempt: 1, outcome: 'success', status: 200 });
    expect(byUrl.get(gone.url)).toMatchObject({ attempt: 1, outcome: 'permanent', status: 404 });

    await sleep(BEYOND_BACKOFF_MS);
    expect(failing.requests).toHaveLength(1);
    expect(ok.requests).toHaveLength(1);
    expect(gone.requests).toHaveLength(1);
    expect(await p.attempts('dest-1')).toHaveLength(3);
    expect(await p.deadLetters('dest-1')).toEqual([]);
  });

  it('every URL answers 500: retried until RETRY_WINDOW_MS has passed, then dead-lettered with the last error', async () => {
    const a = await receiver({ responder: () => ({ status: 500 }) });
    const b = await receiver({ responder: () => ({ status: 500 }) });
    const windowMs = 3000;
    const p = await pipeline({
      label: 'out-window',
      destinations: [webhookDestination('dest-1', [a.url, b.url])],
      deliveryEnv: { RETRY_WINDOW_MS: String(windowMs) },
    });
    await p.route([trackCall('m-window')]);

    const letter = await deadLetterOf(p, 'dest-1', 15_000);
    expect(letter.attempts).toBeGreaterThan(1);
    expect(letter.lastError).toMatch(/retry window/);
    expect(letter.lastError).toContain('HTTP 500');
    expect(Date.parse(letter.deadAt) - Date.parse(letter.firstAttemptAt)).toBeGreaterThanOrEqual(windowMs);
    expect(letter.urls.map((u) => u.url).sort()).toEqual([a.url, b.url].sort());
    for (const u of letter.urls) expect(u.error).toBe('HTTP 500');

    const attempts = await p.attempts('dest-1');
    expect(attempts.length).toBeGreaterThan(2);
    expect(attempts.every((x) => x.outcome === 'retryable' && x.status === 500)).toBe(true);
    expect(new Set(attempts.map((x) => x.attempt)).size).toBe(letter.attempts);
    expect(a.requests.length).toBeGreaterThan(1);
    expect(b.requests.length).toBeGreaterThan(1);
    // Both URLs were attempted in every round.
    expect(a.requests.map((x) => x.headers['x-eventrelay-attempt'])).toEqual(b.requests.map((x) => x.headers['x-eventrelay-attempt']));
    const last = a.requests[a.requests.length - 1]!;
    expect(last.at - a.requests[0]!.at).toBeGreaterThanOrEqual(windowMs - 100);

    // Dead means dead: nothing more arrives.
    const seen = a.requests.length + b.requests.length;
    await sleep(BEYOND_BACKOFF_MS);
    expect(a.requests.length + b.requests.length).toBe(seen);
  }, 30_000);

  it('connection refused (a closed port) is retryable', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hook`;
    const p = await pipeline({ label: 'out-refused', destinations: [webhookDestination('dest-1', [url])] });
    await p.route([trackCall('m-refused')]);

    const attempts = await eventually(async () => {
      const found = await p.attempts('dest-1');
      expect(found.length).toBeGreaterThanOrEqual(2);
      return [...found].reverse();
    });
    expect(attempts[0]).toMatchObject({ url, attempt: 1, outcome: 'retryable' });
    expect(attempts[0]!.error).toMatch(/^connection_refused: .*ECONNREFUSED/);
    expect(attempts[1]).toMatchObject({ url, attempt: 2, outcome: 'retryable' });
    expect(await p.deadLetters('dest-1')).toEqual([]);
  });
});
