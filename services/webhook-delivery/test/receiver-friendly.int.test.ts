/**
 * Receiver-friendly delivery against real receivers (docs/delivery.md, "Receiver-friendly
 * delivery"): a receiver that throttles gets no more than it admits once the adaptive limit has
 * found it, and a receiver that is down gets probes only, then every waiting call soon after it
 * comes back. Nothing is lost in either.
 */
import { standardWebhooksKey, standardWebhooksSignature } from '@eventrelay/config';
import { AuditLog } from '@eventrelay/stores';
import { buildServices, eventually, startReceiver, startService, type ReceivedRequest, type Receiver } from '@eventrelay/testkit';
import { testScope } from '../../../test/support/scope';
import { startTestPipeline, trackCall, webhookDestination, type PipelineOptions, type TestPipeline } from '../../../test/support/pipeline';

const NOTIFY_SECRET = 'whsec_' + Buffer.from('operator-notification-secret-0001').toString('base64');

/** The messageIds a receiver answered 2xx to, and every answer with its time. */
function accounting() {
  const delivered = new Set<string>();
  const answers: { at: number; status: number; messageId: string }[] = [];
  return {
    delivered,
    answers,
    note(req: ReceivedRequest, status: number) {
      const messageId = String(req.headers['x-eventrelay-message-id']);
      answers.push({ at: Date.now(), status, messageId });
      if (status >= 200 && status < 300) delivered.add(messageId);
    },
  };
}

/** Routes `count` calls as ingest would, `perBatch` per call batch (one delivery job each). */
async function routeCalls(p: TestPipeline, tag: string, count: number, perBatch = 20): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `${tag}-${i}`);
  for (let i = 0; i < count; i += perBatch) await p.route(ids.slice(i, i + perBatch).map((id) => trackCall(id)));
  return ids;
}

/** The notifications received, each checked against its Standard Webhooks signature. */
function notificationsOf(r: Receiver): { type: string; destinationId: string; details: Record<string, unknown>; signed: boolean }[] {
  const key = standardWebhooksKey(NOTIFY_SECRET);
  return r.requests.map((req) => {
    const body = req.body.toString('utf8');
    const id = String(req.headers['webhook-id']);
    const timestamp = Number(req.headers['webhook-timestamp']);
    const signed = String(req.headers['webhook-signature']) === standardWebhooksSignature(key, id, timestamp, body);
    return { ...(JSON.parse(body) as { type: string; destinationId: string; details: Record<string, unknown> }), signed };
  });
}

describe('receiver-friendly delivery', () => {
  const scope = testScope();
  async function pipeline(options: PipelineOptions & { notify?: Receiver }): Promise<TestPipeline> {
    const { notify, ...rest } = options;
    return scope.track(
      await startTestPipeline({
        ...rest,
        deliveryEnv: {
          ...(notify ? { NOTIFY_WEBHOOK_URL: notify.url, NOTIFY_WEBHOOK_SECRET: NOTIFY_SECRET } : {}),
          ...rest.deliveryEnv,
        },
      }),
    );
  }
  const auditOf = async (p: TestPipeline) => (await new AuditLog(p.admin, p.prefix).page({ limit: 100 })).items;

  it('converges under a receiver that admits 100 requests/s and answers 429 above it: few 429s after 10 s, 2,000 calls within 30 s, none lost', async () => {
    const book = accounting();
    // A window per wall-clock second, as many rate limiters do: the 101st request of a second gets 429.
    const windows = new Map<number, number>();
    const r = scope.track(
      await startReceiver({
        keep: false,
        responder: () => {
          const second = Math.floor(Date.now() / 1000);
          const n = (windows.get(second) ?? 0) + 1;
          windows.set(second, n);
          return n <= 100 ? { status: 200 } : { status: 429, headers: { 'retry-after': '1' } };
        },
        onAnswered: (req, status) => book.note(req, status),
      }),
    );
    const p = await pipeline({ label: 'throttled', destinations: [webhookDestination('dest-throttled', [r.url])] });
    const started = Date.now();
    const ids = await routeCalls(p, 't', 2000);
    await eventually(() => expect(book.delivered.size).toBe(2000), 60_000, 200);
    const tookS = (Date.now() - started) / 1000;
    const later = book.answers.filter((a) => a.at >= started + 10_000);
    const throttled = later.filter((a) => a.status === 429).length / later.length;
    console.log(
      `throttling test: 2,000 calls delivered in ${tookS} s (the receiver allows 20 s), ${book.answers.length} attempts, ${(throttled * 100).toFixed(1)}% of the ${later.length} after the first 10 s answered 429`,
    );
    expect(throttled).toBeLessThan(0.05);
    expect(tookS).toBeLessThanOrEqual(30);
    expect([...book.delivered].sort()).toEqual([...ids].sort());
    expect(await p.deadLetters('dest-throttled')).toEqual([]);
  }, 90_000);

  it('opens the breaker on a receiver down for 30 s: probes only, then every waiting call within 10 s of its recovery; operators are told, signed', async () => {
    const book = accounting();
    let downUntil = Number.POSITIVE_INFINITY;
    const r = scope.track(
      await startReceiver({
        keep: false,
        responder: () => (Date.now() < downUntil ? { status: 503 } : { status: 200 }),
        onAnswered: (req, status) => book.note(req, status),
      }),
    );
    const notify = scope.track(await startReceiver());
    const p = await pipeline({ label: 'outage', notify, destinations: [webhookDestination('dest-down', [r.url])] });
    const began = Date.now();
    downUntil = began + 30_000;
    const ids = await routeCalls(p, 'o', 500);
    await eventually(async () => expect((await auditOf(p)).map((e) => e.action)).toContain('destination.breaker_opened'), 10_000);
    await eventually(() => expect(book.delivered.size).toBe(500), 60_000, 100);
    const lastAt = Math.max(...book.answers.filter((a) => a.status === 200).map((a) => a.at));
    const during = book.answers.filter((a) => a.at < downUntil).length;
    const firstOk = Math.min(...book.answers.filter((a) => a.status === 200).map((a) => a.at));
    console.log(
      `outage test: ${during} requests for 500 calls during the 30 s outage; the breaker closed ${firstOk - downUntil} ms after the receiver came back, the last call arrived ${lastAt - downUntil} ms after it`,
    );
    // Probe traffic only: the first round of each call, then a probe at a time.
    expect(during).toBeLessThanOrEqual(2 * 500);
    expect(lastAt - downUntil).toBeLessThanOrEqual(10_000);
    expect([...book.delivered].sort()).toEqual([...ids].sort());
    expect(await p.deadLetters('dest-down')).toEqual([]);

    await eventually(() =>
      expect(notificationsOf(notify).map((n) => [n.type, n.destinationId, n.signed])).toEqual([
        ['destination.breaker_opened', 'dest-down', true],
        ['destination.breaker_closed', 'dest-down', true],
      ]),
    );
    const actions = (await auditOf(p)).map((e) => [e.action, e.targetId, e.tokenId]);
    expect(actions).toEqual(
      expect.arrayContaining([
        ['destination.breaker_opened', 'dest-down', 'webhook-delivery'],
        ['destination.breaker_closed', 'dest-down', 'webhook-delivery'],
      ]),
    );
    const gauge = (await p.deliveryRegistry.getSingleMetric('eventrelay_delivery_breaker_open')!.get()).values;
    expect(gauge.find((v) => v.labels.destination === 'dest-down')?.value).toBe(0);
  }, 120_000);

  it('a 410 Gone disables that URL for good, the other URL keeps working, and operators are told', async () => {
    const gone = scope.track(await startReceiver({ responder: () => ({ status: 410 }) }));
    const kept = scope.track(await startReceiver());
    const notify = scope.track(await startReceiver());
    const p = await pipeline({ label: 'gone', notify, destinations: [webhookDestination('dest-gone', [gone.url, kept.url])] });
    await p.route([trackCall('g-1')]);
    await kept.waitFor(1);
    const stored = await eventually(async () => {
      const d = (await p.store.destinations()).find((x) => x.id === 'dest-gone')!;
      expect(d.settings.webhooks[0]).toEqual({
        url: gone.url,
        disabled: true,
        disabledReason: expect.stringMatching(/^answered 410 Gone at /),
      });
      return d;
    });
    expect(stored.settings.webhooks[1]).toEqual({ url: kept.url });
    await p.delivery!.refreshConfig();
    await p.route([trackCall('g-2'), trackCall('g-3')]);
    await kept.waitFor(3);
    expect(gone.requests).toHaveLength(1);
    expect(kept.requests.map((r) => r.headers['x-eventrelay-message-id'])).toEqual(['g-1', 'g-2', 'g-3']);
    await eventually(() =>
      expect(notificationsOf(notify)).toEqual([
        expect.objectContaining({
          type: 'destination.url_disabled',
          destinationId: 'dest-gone',
          signed: true,
          details: expect.objectContaining({ url: new URL(gone.url).origin }),
        }),
      ]),
    );
    expect((await auditOf(p)).map((e) => e.action)).toContain('destination.url_disabled');

    // With every URL disabled, calls are dead letters (replayable once an operator re-enables one).
    await p.setDestinations([{ ...stored, settings: { webhooks: [stored.settings.webhooks[0]!] } }]);
    await p.route([trackCall('g-4')]);
    const letters = await eventually(async () => {
      const found = await p.deadLetters('dest-gone');
      expect(found).toHaveLength(1);
      return found;
    });
    expect(letters[0]!.lastError).toBe('every URL of the destination is disabled (410 Gone, or by an operator)');
    expect(gone.requests).toHaveLength(1);
  });

  it('honours a destination’s own timeout and retry window', async () => {
    let offsetMs = 0;
    const slow = scope.track(await startReceiver({ responder: () => ({ status: 200, delayMs: 1500 }) }));
    const p = await pipeline({
      label: 'own-settings',
      clock: () => Date.now() + offsetMs,
      random: () => 0.999,
      destinations: [
        webhookDestination('dest-own', [slow.url], { settings: { webhooks: [{ url: slow.url }], timeoutMs: 1000, retryWindowMs: 60_000 } }),
      ],
    });
    await p.route([trackCall('w-1')]);
    const first = await eventually(async () => {
      const found = await p.attempts('dest-own');
      expect(found).toHaveLength(1);
      return found[0]!;
    });
    expect(first.error).toBe('timeout: no complete response within 1000 ms');
    // Past the destination's 1-minute window (not the 4-hour default): the next round is its last.
    offsetMs = 61_000;
    const job = await eventually(async () => {
      const [found] = await p.deliverQueue.getDelayed();
      expect(found).toBeDefined();
      return found!;
    });
    await job.promote();
    const [letter] = await eventually(async () => {
      const found = await p.deadLetters('dest-own');
      expect(found).toHaveLength(1);
      return found;
    });
    expect(letter!.lastError).toMatch(/^retry window of 1 min passed; last error: .*timeout: no complete response within 1000 ms/);
  });

  it('disables a destination whose breaker stayed open for its autoDisableAfterMs, and tells operators', async () => {
    let offsetMs = 0;
    const down = scope.track(await startReceiver({ responder: () => ({ status: 503 }) }));
    const notify = scope.track(await startReceiver());
    const destination = webhookDestination('dest-auto', [down.url], {
      settings: { webhooks: [{ url: down.url }], autoDisableAfterMs: 60_000 },
    });
    const p = await pipeline({ label: 'auto-disable', notify, clock: () => Date.now() + offsetMs, destinations: [destination] });
    await routeCalls(p, 'a', 40);
    await eventually(() => expect(notificationsOf(notify).map((n) => n.type)).toContain('destination.breaker_opened'));
    // A minute later the breaker is still open: the next probe's failure disables the destination.
    offsetMs = 61_000;
    await eventually(async () => expect((await p.store.destinations()).find((d) => d.id === 'dest-auto')?.enabled).toBe(false), 20_000);
    await eventually(() =>
      expect(notificationsOf(notify)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            type: 'destination.auto_disabled',
            destinationId: 'dest-auto',
            signed: true,
            details: expect.objectContaining({ autoDisableAfterMs: 60_000 }),
          }),
        ]),
      ),
    );
    expect((await auditOf(p)).map((e) => e.action)).toContain('destination.auto_disabled');
    // Its calls are kept as dead letters, replayable once it is enabled again. (The jobs were put
    // back on the moved clock, a minute ahead of Redis's: the test brings them forward.)
    await eventually(async () => {
      for (const job of await p.deliverQueue.getDelayed()) await job.promote().catch(() => undefined);
      expect(await p.deadLetters('dest-auto')).toHaveLength(40);
    }, 20_000);
  }, 60_000);

  it('holds a destination’s maxRequestsPerSecond across two webhook-delivery processes', async () => {
    buildServices('webhook-delivery');
    const book = accounting();
    const r = scope.track(await startReceiver({ keep: false, onAnswered: (req, status) => book.note(req, status) }));
    const destination = webhookDestination('dest-capped', [r.url], { settings: { webhooks: [{ url: r.url }], maxRequestsPerSecond: 50 } });
    const p = await pipeline({ label: 'rate-capped', destinations: [destination] });
    const child = await startService('webhook-delivery', {
      REDIS_URL: p.redisUrl,
      EVENTRELAY_PREFIX: p.prefix,
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      LOG_LEVEL: 'warn',
    });
    let stopped = false;
    try {
      const ids = await routeCalls(p, 'c', 300, 10);
      await eventually(() => expect(book.delivered.size).toBe(300), 30_000, 100);
      // Stopped, the child has written its attempts: each records when its request started, in
      // the process that sent it (the receiver's clock shares this test's event loop with the
      // in-process delivery, and its stalls would bunch the answers it records).
      await child.stop();
      stopped = true;
      const attempts = await p.attempts('dest-capped');
      expect(attempts).toHaveLength(300);
      const times = attempts.map((a) => Date.parse(a.at)).sort((a, b) => a - b);
      // The most requests that started in any one second.
      let most = 0;
      for (let i = 0, j = 0; i < times.length; i++) {
        while (times[i]! - times[j]! >= 1000) j++;
        most = Math.max(most, i - j + 1);
      }
      console.log(`rate cap test: at most ${most} requests started in any one second (cap 50/s, two processes)`);
      // Slots are booked in Redis at the cap; a start is recorded after its slot, so a process whose
      // event loop stalled (two jest workers on a loaded 2-core machine) records a few late starts
      // together: 57 of 50 was seen. Uncapped, two processes send the 300 within a second or two.
      expect(most).toBeLessThanOrEqual(60);
      expect(times[times.length - 1]! - times[0]!).toBeGreaterThanOrEqual(5000);
      expect([...book.delivered].sort()).toEqual([...ids].sort());
    } finally {
      if (!stopped) await child.stop();
    }
  }, 60_000);
});
