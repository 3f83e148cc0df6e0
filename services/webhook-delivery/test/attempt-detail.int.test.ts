/**
 * What the attempt log keeps of each request and answer (docs/delivery.md, "Attempt detail"), as
 * written by the real sender against real receivers: excerpts within their limits, static header
 * values hidden, the connection kept across answers with long bodies; and the progress of a replay,
 * counted once per call however often its job runs.
 */
import type { DeliveryAttempt } from '@eventrelay/config';
import { ReplayProgressStore } from '@eventrelay/stores';
import { eventually, type Receiver, startReceiver } from '@eventrelay/testkit';
import { testScope } from '../../../test/support/scope';
import { startTestPipeline, trackCall, webhookDestination, type TestPipeline } from '../../../test/support/pipeline';

describe('attempt detail and replay progress', () => {
  const scope = testScope();
  async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
    return scope.track(await startReceiver(...args));
  }
  async function pipeline(...args: Parameters<typeof startTestPipeline>): Promise<TestPipeline> {
    return scope.track(await startTestPipeline(...args));
  }
  async function attemptOf(p: TestPipeline, destinationId: string, messageId: string): Promise<DeliveryAttempt> {
    return eventually(async () => {
      const found = (await p.attempts(destinationId)).find((a) => a.messageId === messageId);
      expect(found).toBeDefined();
      return found!;
    }, 5000);
  }

  it('keeps the request with static header values hidden, and the first 8 KiB of a long body', async () => {
    const r = await receiver();
    const p = await pipeline({
      label: 'detail-request',
      destinations: [
        webhookDestination('dest-d', [{ url: r.url, headers: { 'X-Api-Key': 'key-never-logged' } }], { sharedSecret: 'shh-secret' }),
      ],
    });
    await p.route([trackCall('m-long', { properties: { text: 'é'.repeat(10_000) } })]);
    const [req] = await r.waitFor(1);
    const attempt = await attemptOf(p, 'dest-d', 'm-long');
    expect(attempt.request!.headers).toMatchObject({
      'x-api-key': '[write-only]',
      'x-signature': req!.headers['x-signature'],
      'x-eventrelay-message-id': 'm-long',
    });
    expect(req!.headers['x-api-key']).toBe('key-never-logged');
    expect(JSON.stringify(attempt)).not.toContain('key-never-logged');
    const sent = req!.body.toString('utf8');
    expect(Buffer.byteLength(attempt.request!.body)).toBeLessThanOrEqual(8 * 1024);
    expect(Buffer.byteLength(attempt.request!.body)).toBeGreaterThan(8 * 1024 - 2);
    expect(sent.startsWith(attempt.request!.body)).toBe(true);
    expect(attempt.request!.bodyTruncated).toBe(true);
  });

  it('with DELIVERY_LOG_DETAIL=failures keeps the detail of failed attempts only, whatever a call says of itself', async () => {
    const r = await receiver({
      responder: (req) => ({ status: req.headers['x-eventrelay-message-id'] === 'm-refused' ? 400 : 200, body: 'answer' }),
    });
    const p = await pipeline({
      label: 'detail-failures',
      destinations: [webhookDestination('dest-f', [r.url])],
      deliveryEnv: { DELIVERY_LOG_DETAIL: 'failures' },
    });
    await p.route([trackCall('m-ok'), trackCall('m-refused'), trackCall('m-test', { context: { eventrelayTestSend: true } })]);
    await r.waitFor(3);
    const ok = await attemptOf(p, 'dest-f', 'm-ok');
    expect(ok).toMatchObject({ outcome: 'success', status: 200 });
    expect(ok).not.toHaveProperty('request');
    expect(ok).not.toHaveProperty('response');
    expect(ok).not.toHaveProperty('userId');
    expect((await attemptOf(p, 'dest-f', 'm-refused')).response).toMatchObject({ body: 'answer' });
    // A call claiming to be a test send gets no more than any other.
    expect(await attemptOf(p, 'dest-f', 'm-test')).not.toHaveProperty('request');
  });

  it('keeps the first 1 KiB of an answer and at most 20 of its headers; long answers still leave the connection usable', async () => {
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`x-h${String(i).padStart(2, '0')}`, 'v']));
    const r = await receiver({
      responder: (req) =>
        req.headers['x-eventrelay-message-id'] === 'm-short'
          ? { status: 500, body: 'try later' }
          : { status: 200, headers: many, body: 'a'.repeat(100_000) },
    });
    const p = await pipeline({ label: 'detail-response', destinations: [webhookDestination('dest-r', [r.url])] });
    await p.route([trackCall('m-big-1')]);
    await p.route([trackCall('m-short')]);
    await p.route([trackCall('m-big-2')]);
    await r.waitFor(3);
    const big = await attemptOf(p, 'dest-r', 'm-big-1');
    expect(big.outcome).toBe('success');
    expect(big.response!.body).toBe('a'.repeat(1024));
    expect(big.response!.bodyTruncated).toBe(true);
    expect(Object.keys(big.response!.headers)).toHaveLength(20);
    expect((await attemptOf(p, 'dest-r', 'm-big-2')).outcome).toBe('success');
    const short = await attemptOf(p, 'dest-r', 'm-short');
    expect(short).toMatchObject({ outcome: 'retryable', status: 500, response: { body: 'try later' } });
    expect(short.response).not.toHaveProperty('bodyTruncated');
  });

  it('an attempt without an answer has no response', async () => {
    const p = await pipeline({
      label: 'detail-refused',
      destinations: [webhookDestination('dest-x', ['http://127.0.0.1:9/hook'])],
    });
    await p.route([trackCall('m-refused')]);
    const attempt = await attemptOf(p, 'dest-x', 'm-refused');
    expect(attempt.error).toMatch(/^connection_refused/);
    expect(attempt.request).toMatchObject({ method: 'POST', headers: { 'x-eventrelay-message-id': 'm-refused' } });
    expect(attempt).not.toHaveProperty('response');
  });

  it('counts a replayed call once under its final outcome, even when its job runs twice', async () => {
    const r = await receiver({ responder: (req) => ({ status: req.headers['x-eventrelay-message-id'] === 'm-bad' ? 404 : 200 }) });
    const p = await pipeline({ label: 'replay-progress', destinations: [webhookDestination('dest-p', [r.url])] });
    const progress = new ReplayProgressStore(p.admin, p.prefix);
    await progress.begin('rpl_t', 'dest-p', new Date().toISOString());
    await progress.plan('dest-p', 'rpl_t', [
      { sourceId: 'src-test', messageId: 'm-ok' },
      { sourceId: 'src-test', messageId: 'm-bad' },
    ]);
    const job = (messageId: string) => ({
      destinationId: 'dest-p',
      calls: [{ sourceId: 'src-test', call: trackCall(messageId), replayId: 'rpl_t' }],
    });
    await p.deliverQueue.add('deliver', job('m-ok'), { jobId: 'replay-ok-1' });
    await p.deliverQueue.add('deliver', job('m-bad'), { jobId: 'replay-bad-1' });
    await eventually(
      async () => expect(await progress.read('dest-p', 'rpl_t')).toMatchObject({ delivered: 1, deadLettered: 1, pending: 0 }),
      5000,
    );
    // As a worker that died after sending and before completing: the same calls run again.
    await p.deliverQueue.add('deliver', job('m-ok'), { jobId: 'replay-ok-2' });
    await p.deliverQueue.add('deliver', job('m-bad'), { jobId: 'replay-bad-2' });
    await r.waitFor(4);
    // A call the replay never planned changes nothing.
    await p.deliverQueue.add('deliver', job('m-stranger'), { jobId: 'replay-stranger' });
    await r.waitFor(5);
    await eventually(
      async () => expect(await p.deliverQueue.getJobCounts('active', 'wait', 'delayed')).toEqual({ active: 0, wait: 0, delayed: 0 }),
      5000,
    );
    expect(await progress.read('dest-p', 'rpl_t')).toEqual({
      replayId: 'rpl_t',
      destinationId: 'dest-p',
      startedAt: expect.any(String),
      replayed: 2,
      delivered: 1,
      deadLettered: 1,
      pending: 0,
    });
    expect(await progress.read('dest-p', 'rpl_unknown')).toBeUndefined();
  });
});
