/**
 * What the web console reads and does through the admin API, over real HTTP against real Redis with
 * the real pipeline and receivers: a test send that travels router and webhook-delivery and shows
 * up in the attempt log with its request and response; the attempt log's and dead letters'
 * filters; a replay by filter and its progress; the installation info.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { verifySignature, type DeadLetter, type DeliveryAttempt } from '@eventrelay/config';
import { AttemptLog, DeadLetterStore } from '@eventrelay/stores';
import { eventually, startReceiver, type ReceivedRequest } from '@eventrelay/testkit';
import { startTestAdmin, type TestAdmin } from '../../../test/support/admin';
import { startTestPipeline, trackCall, webhookDestination, type TestPipeline } from '../../../test/support/pipeline';
import { testScope } from '../../../test/support/scope';

const SECRET = 'console-shared-secret-0001';
const messageIdOf = (req: ReceivedRequest) => String(req.headers['x-eventrelay-message-id']);

describe('admin API for the console', () => {
  const scope = testScope();

  async function setup(label: string, destinations = [] as ReturnType<typeof webhookDestination>[], env?: Record<string, string>) {
    const p: TestPipeline = scope.track(await startTestPipeline({ label, destinations }));
    const admin: TestAdmin = scope.track(await startTestAdmin({ prefix: p.prefix, ...(env ? { env } : {}) }));
    return { p, admin };
  }

  describe('POST /destinations/:id/test-send', () => {
    it('sends a signed sample call through router and webhook-delivery to that destination only; its attempt shows with request and response', async () => {
      const receiver = scope.track(
        await startReceiver({ responder: () => ({ status: 202, headers: { 'x-receiver': 'console-test' }, body: '{"queued":true}' }) }),
      );
      // Another Webhooks destination of the same source: a test send is not for it.
      const bystander = scope.track(await startReceiver());
      const { p, admin } = await setup('console-send', [
        webhookDestination('dst-c', [{ url: receiver.url, headers: { Authorization: 'Bearer receiver-secret-token' } }], {
          sharedSecret: SECRET,
        }),
        webhookDestination('dst-other', [bystander.url]),
      ]);

      const sent = await admin.call('POST', '/destinations/dst-c/test-send', { type: 'identify' });
      expect(sent.status).toBe(202);
      const messageId = sent.body.messageId as string;
      expect(messageId).toMatch(/^test-[0-9a-f]{24}$/);
      expect(sent.body).toMatchObject({
        sourceId: p.source.id,
        call: { type: 'identify', messageId, userId: 'eventrelay-test-user', context: { eventrelayTestSend: true } },
      });

      const [request] = await receiver.waitFor(1, 5000);
      expect(messageIdOf(request!)).toBe(messageId);
      expect(verifySignature(SECRET, request!.body, request!.headers['x-signature'])).toBe(true);
      expect(request!.headers['authorization']).toBe('Bearer receiver-secret-token');
      const body = JSON.parse(request!.body.toString('utf8')) as Record<string, unknown>;
      expect(body).toMatchObject({ type: 'identify', userId: 'eventrelay-test-user', traits: { email: 'test@example.com' } });
      expect(body['context']).toMatchObject({ eventrelayTestSend: true });

      const attempt = await eventually(async () => {
        const page = await admin.call('GET', `/destinations/dst-c/deliveries?messageId=${messageId}`);
        expect(page.status).toBe(200);
        expect(page.body.items).toHaveLength(1);
        return page.body.items[0] as DeliveryAttempt;
      }, 5000);
      expect(attempt).toMatchObject({ messageId, outcome: 'success', status: 202, sourceId: p.source.id });
      expect(attempt.request).toEqual({
        method: 'POST',
        headers: {
          authorization: '[write-only]',
          'user-agent': 'Eventrelay/1.0',
          'content-type': 'application/json',
          'x-signature': request!.headers['x-signature'],
          'x-eventrelay-message-id': messageId,
          'x-eventrelay-attempt': '1',
        },
        body: request!.body.toString('utf8'),
      });
      expect(attempt.response).toMatchObject({ headers: { 'x-receiver': 'console-test' }, body: '{"queued":true}' });
      expect(attempt.response).not.toHaveProperty('bodyTruncated');
      const log = await admin.call('GET', '/destinations/dst-c/deliveries');
      expect(log.text).not.toContain('receiver-secret-token');
      // A call sent after the test call reaches the bystander: had the test call been routed to it, it would be there first.
      await p.route([trackCall('after-test-send')]);
      const [first] = await bystander.waitFor(1, 5000);
      expect(messageIdOf(first!)).toBe('after-test-send');
      expect((await admin.call('GET', `/destinations/dst-other/deliveries?messageId=${messageId}`)).body.items).toEqual([]);

      const audit = (await admin.call('GET', '/audit?limit=1')).body.items[0];
      expect(audit).toMatchObject({
        action: 'destination.test_send',
        targetId: 'dst-c',
        details: { messageId, sourceId: p.source.id, type: 'identify' },
      });
    });

    it('refuses a disabled destination and one without a source with 409', async () => {
      const { admin } = await setup('console-send-409', [
        webhookDestination('dst-off', ['http://127.0.0.1:9/'], { enabled: false }),
        webhookDestination('dst-alone', ['http://127.0.0.1:9/'], { sourceIds: [] }),
      ]);
      const off = await admin.call('POST', '/destinations/dst-off/test-send', { type: 'track' });
      expect(off.status).toBe(409);
      expect(off.body).toMatchObject({ code: 'conflict', message: expect.stringContaining('disabled') });
      const alone = await admin.call('POST', '/destinations/dst-alone/test-send', { type: 'track' });
      expect(alone.status).toBe(409);
      expect(alone.body).toMatchObject({ code: 'conflict', message: expect.stringContaining('no source') });
      expect((await admin.call('POST', '/destinations/dst-nope/test-send', { type: 'track' })).status).toBe(404);
    });
  });

  describe('GET /destinations/:id/deliveries filters', () => {
    it('combines statusClass, messageId, since and until with status, and pages through them', async () => {
      const { p, admin } = await setup('console-filter', [webhookDestination('dst-f', ['http://127.0.0.1:9/'], { enabled: false })]);
      const log = new AttemptLog(p.admin, p.prefix, { maxPerDestination: 1000 });
      const base = Date.parse('2026-11-21T09:00:00.000Z');
      const entry = (i: number, extra: Partial<DeliveryAttempt>): DeliveryAttempt => ({
        destinationId: 'dst-f',
        sourceId: 'src-test',
        messageId: `m-${i}`,
        url: 'http://r/',
        attempt: 1,
        outcome: 'success',
        status: 200,
        latencyMs: 1,
        at: new Date(base + i * 60_000).toISOString(),
        ...extra,
      });
      // Oldest first into the log: m-0 … m-5, one a minute.
      log.record(entry(0, {}));
      log.record(entry(1, { outcome: 'retryable', status: 503, error: 'HTTP 503' }));
      log.record(entry(2, { outcome: 'permanent', status: 404, error: 'HTTP 404' }));
      const timeout = entry(3, { outcome: 'retryable', error: 'timeout: no complete response within 5000 ms' });
      delete (timeout as { status?: number }).status;
      log.record(timeout);
      log.record(entry(4, { outcome: 'permanent', status: 302, error: 'HTTP 302 (redirects are not followed)' }));
      log.record(entry(5, {}));
      await log.flush();
      const ids = async (query: string) => {
        const res = await admin.call('GET', `/destinations/dst-f/deliveries?${query}`);
        expect(res.status).toBe(200);
        return (res.body.items as DeliveryAttempt[]).map((a) => a.messageId);
      };
      const at = (i: number) => encodeURIComponent(new Date(base + i * 60_000).toISOString());

      expect(await ids('')).toEqual(['m-5', 'm-4', 'm-3', 'm-2', 'm-1', 'm-0']);
      expect(await ids('statusClass=2xx')).toEqual(['m-5', 'm-0']);
      expect(await ids('statusClass=5xx')).toEqual(['m-1']);
      expect(await ids('statusClass=4xx')).toEqual(['m-2']);
      expect(await ids('statusClass=3xx')).toEqual(['m-4']);
      expect(await ids('statusClass=none')).toEqual(['m-3']);
      expect(await ids('messageId=m-2')).toEqual(['m-2']);
      expect(await ids('messageId=m')).toEqual([]);
      expect(await ids(`since=${at(1)}&until=${at(4)}`)).toEqual(['m-4', 'm-3', 'm-2', 'm-1']);
      expect(await ids(`status=failed&since=${at(2)}`)).toEqual(['m-4', 'm-3', 'm-2']);
      expect(await ids(`status=retryable&statusClass=none`)).toEqual(['m-3']);

      const first = await admin.call('GET', `/destinations/dst-f/deliveries?status=failed&limit=2`);
      expect(first.body.items.map((a: DeliveryAttempt) => a.messageId)).toEqual(['m-4', 'm-3']);
      const second = await admin.call(
        'GET',
        `/destinations/dst-f/deliveries?status=failed&limit=2&cursor=${first.body.nextCursor as string}`,
      );
      expect(second.body.items.map((a: DeliveryAttempt) => a.messageId)).toEqual(['m-2', 'm-1']);
    });
  });

  describe('dead letters: filter, replay by filter, progress', () => {
    it('lists by q, since and until; replays what a filter matches and counts each outcome once', async () => {
      // The receiver refuses one of the replayed calls for good: it is dead-lettered again.
      const receiver = scope.track(
        await startReceiver({ responder: (req) => ({ status: messageIdOf(req) === 'order-refused' ? 404 : 200 }) }),
      );
      const { p, admin } = await setup('console-dead', [webhookDestination('dst-d', [receiver.url])]);
      const letters = new DeadLetterStore(p.admin, p.prefix, { maxPerDestination: 1000 });
      const base = Date.parse('2026-11-21T09:00:00.000Z');
      const letter = (i: number, messageId: string, event: string, lastError: string): DeadLetter => ({
        jobId: `dst-d-letter-${i}`,
        job: { sourceId: 'src-test', destinationId: 'dst-d', call: trackCall(messageId, { event }) },
        attempts: 3,
        lastError,
        urls: [{ url: receiver.url, error: lastError }],
        firstAttemptAt: new Date(base).toISOString(),
        deadAt: new Date(base + i * 60_000).toISOString(),
      });
      await letters.add(letter(1, 'order-ok', 'Order Completed', 'HTTP 503'));
      await letters.add(letter(2, 'signup-1', 'Signed Up', 'HTTP 503'));
      await letters.add(letter(3, 'order-refused', 'Order Completed', 'timeout: no complete response'));
      await letters.add(letter(4, 'signup-2', 'Signed Up', 'HTTP 500'));
      const listed = async (query: string) => {
        const res = await admin.call('GET', `/destinations/dst-d/dead-letters?${query}`);
        expect(res.status).toBe(200);
        return res.body as { items: DeadLetter[]; nextCursor: string | null };
      };
      const idsOf = (page: { items: DeadLetter[] }) => page.items.map((l) => l.job.call.messageId);
      const at = (i: number) => encodeURIComponent(new Date(base + i * 60_000).toISOString());

      expect(idsOf(await listed('q=ORDER'))).toEqual(['order-refused', 'order-ok']);
      expect(idsOf(await listed('q=signed%20up'))).toEqual(['signup-2', 'signup-1']);
      expect(idsOf(await listed('q=503'))).toEqual(['signup-1', 'order-ok']);
      expect(idsOf(await listed('q=track'))).toHaveLength(4);
      expect(idsOf(await listed(`since=${at(2)}&until=${at(3)}`))).toEqual(['order-refused', 'signup-1']);
      expect(idsOf(await listed(`q=signup&until=${at(3)}`))).toEqual(['signup-1']);
      // A filtered page with a cursor goes on where the last one stopped.
      const one = await listed('q=order&limit=1');
      expect(idsOf(one)).toEqual(['order-refused']);
      const two = await listed(`q=order&limit=1&cursor=${encodeURIComponent(one.nextCursor!)}`);
      expect(idsOf(two)).toEqual(['order-ok']);
      expect(two.nextCursor).toBeNull();

      const replay = await admin.call('POST', '/destinations/dst-d/replay', { filter: { q: 'order' } });
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual({ replayId: expect.stringMatching(/^rpl_/), replayed: 2, notFound: [] });
      const replayId = replay.body.replayId as string;

      const progress = await eventually(async () => {
        const res = await admin.call('GET', `/destinations/dst-d/replays/${replayId}`);
        expect(res.status).toBe(200);
        expect(res.body.pending).toBe(0);
        return res.body;
      }, 5000);
      expect(progress).toEqual({
        replayId,
        destinationId: 'dst-d',
        startedAt: expect.any(String),
        replayed: 2,
        delivered: 1,
        deadLettered: 1,
        pending: 0,
      });
      expect(receiver.requests.map(messageIdOf).sort()).toEqual(['order-ok', 'order-refused']);
      // The replayed letters left the list; the one refused again is back, as the newest.
      expect(idsOf(await listed(''))).toEqual(['order-refused', 'signup-2', 'signup-1']);
      // webhook-delivery writes entries of its own too (the first dead letters of the hour): the newest replay entry.
      const audit = (await admin.call('GET', '/audit?limit=20')).body.items.find(
        (e: { action: string }) => e.action === 'destination.replay',
      );
      expect(audit).toMatchObject({ action: 'destination.replay', details: { selection: 'filter', replayed: 2, replayId } });

      expect((await admin.call('GET', '/destinations/dst-d/replays/rpl_unknown')).status).toBe(404);
      await p.setDestinations([webhookDestination('dst-d', [receiver.url]), webhookDestination('dst-e', [receiver.url])]);
      expect((await admin.call('GET', `/destinations/dst-e/replays/${replayId}`)).status).toBe(404);
    });
  });

  describe('GET /info', () => {
    it('answers the package version and ADMIN_INTAKE_URL, and needs the token', async () => {
      const { admin } = await setup('console-info', [], { ADMIN_INTAKE_URL: 'https://events.example.com/' });
      const pkg = JSON.parse(readFileSync(path.resolve(__dirname, '../package.json'), 'utf8')) as { version: string };
      const info = await admin.call('GET', '/info');
      expect(info.status).toBe(200);
      expect(info.body).toEqual({ version: pkg.version, intakeUrl: 'https://events.example.com' });
      expect((await admin.call('GET', '/info', undefined, { token: null })).status).toBe(401);
    });
  });
});
