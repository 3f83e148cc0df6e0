/**
 * Changes made through the admin API reach the running pipeline (ingest, router, webhook-delivery
 * in this process, never restarted) within 2 s (docs/spec.md §6), and the operator views the admin
 * API serves — attempt log, dead letters and replay, event debugger — read what the pipeline wrote.
 * Calls enter through the real intake over HTTP.
 */
import { type DeadLetter, type DebugEvent, type DeliveryAttempt, verifySignature } from '@eventrelay/config';
import { startTestAdmin, type TestAdmin } from '../../../test/support/admin';
import { eventually, type ReceivedRequest, type Receiver, startReceiver, sleep } from '@eventrelay/testkit';
import { post } from '../../../test/support/ingest';
import { startTestPipeline, type PipelineOptions, type TestPipeline } from '../../../test/support/pipeline';
import { testScope } from '../../../test/support/scope';

/** docs/spec.md §6: a change through the API takes effect in every running process within 2 s. */
const PROPAGATION_MS = 2000;
const SECRET = 'live-config-shared-secret';
const REPLAY_ID = expect.stringMatching(/^rpl_[0-9a-f]{16}$/) as unknown;

const messageIdOf = (req: ReceivedRequest) => String(req.headers['x-eventrelay-message-id']);
const bodyOf = (req: ReceivedRequest) => JSON.parse(req.body.toString('utf8')) as { event?: string; properties?: Record<string, unknown> };

/** What the tests measured, printed once at the end. */
const timings: Record<string, number> = {};

interface SentCall {
  readonly messageId: string;
  /** Date.now() when the request was sent. */
  readonly sentAt: number;
  status?: number;
}

/** Sends one track call every `everyMs` until stopped, remembering when each was sent. */
class Traffic {
  readonly sent: SentCall[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private n = 0;

  constructor(
    private readonly ingestUrl: string,
    private readonly writeKey: string,
    private readonly label: string,
    private readonly everyMs = 100,
  ) {}

  start(): this {
    const tick = () => {
      const messageId = `${this.label}-${++this.n}`;
      const call: SentCall = { messageId, sentAt: Date.now() };
      this.sent.push(call);
      const p = track(this.ingestUrl, this.writeKey, { messageId, event: 'Live', properties: { seq: this.n } }).then(
        (status) => void (call.status = status),
      );
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
    };
    tick();
    this.timer = setInterval(tick, this.everyMs);
    return this;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all(this.inFlight);
  }

  sentAtOf(messageId: string): number {
    const call = this.sent.find((c) => c.messageId === messageId);
    if (!call) throw new Error(`no call ${messageId} was sent`);
    return call.sentAt;
  }
}

async function track(ingestUrl: string, writeKey: string, call: Record<string, unknown>): Promise<number> {
  const res = await post(ingestUrl, '/v1/track', { userId: 'user-live', event: 'Live', ...call }, { writeKey });
  return res.status;
}

describe('admin API: live config changes and operator views', () => {
  const scope = testScope();

  afterAll(() => {
    console.info(`live-config timings (ms): ${JSON.stringify(timings)}`);
  });

  async function setup(label: string, options: PipelineOptions = {}): Promise<{ p: TestPipeline; admin: TestAdmin }> {
    const p = scope.track(await startTestPipeline({ label, ingest: true, destinations: [], ...options }));
    const admin = scope.track(await startTestAdmin({ prefix: p.prefix }));
    return { p, admin };
  }

  async function createDestination(
    admin: TestAdmin,
    urls: string[],
    extra: Record<string, unknown> = {},
  ): Promise<{ id: string; createdAt: number }> {
    const res = await admin.call('POST', '/destinations', {
      name: 'Webhooks',
      enabled: true,
      sourceIds: ['src-test'],
      settings: { webhooks: urls.map((url) => ({ url })), sharedSecret: SECRET },
      ...extra,
    });
    const createdAt = Date.now();
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Webhooks',
      enabled: true,
      sourceIds: ['src-test'],
      settings: { webhooks: urls.map((url) => ({ url })), sharedSecret: { set: true } },
    });
    expect(res.text).not.toContain(SECRET);
    return { id: res.body.id as string, createdAt };
  }

  /** For tests that are not about propagation: make router and webhook-delivery see the change now. */
  async function refreshNow(p: TestPipeline): Promise<void> {
    await p.router.refreshConfig();
    await p.delivery!.refreshConfig();
  }

  async function deadLetters(admin: TestAdmin, destinationId: string): Promise<DeadLetter[]> {
    const res = await admin.call('GET', `/destinations/${destinationId}/dead-letters?limit=1000`);
    expect(res.status).toBe(200);
    return res.body.items as DeadLetter[];
  }

  async function deliveries(
    admin: TestAdmin,
    destinationId: string,
    query = 'limit=1000',
  ): Promise<{ items: DeliveryAttempt[]; nextCursor: string | null }> {
    const res = await admin.call('GET', `/destinations/${destinationId}/deliveries?${query}`);
    expect(res.status).toBe(200);
    return res.body;
  }

  it('a destination created through the API receives calls within 2 s, signed with its secret', async () => {
    const receiver = scope.track(await startReceiver());
    const { p, admin } = await setup('live-create');

    const { id, createdAt } = await createDestination(admin, [receiver.url]);
    const traffic = scope.track(new Traffic(p.ingestUrl, p.writeKey, 'create').start());
    await receiver.waitFor(1, 5000);
    const first = receiver.requests[0]!;
    await traffic.close();

    const elapsed = first.at - createdAt;
    timings['creationToFirstDelivery'] = elapsed;
    expect(elapsed).toBeLessThan(PROPAGATION_MS);
    expect(traffic.sent.every((c) => c.status === 200)).toBe(true);
    expect(traffic.sent.map((c) => c.messageId)).toContain(messageIdOf(first));
    expect(verifySignature(SECRET, first.body, first.headers['x-signature'])).toBe(true);
    expect(verifySignature('another-secret', first.body, first.headers['x-signature'])).toBe(false);
    expect(first.headers['x-eventrelay-attempt']).toBe('1');
    expect(bodyOf(first)).toMatchObject({ type: 'track', event: 'Live', userId: 'user-live' });

    const log = await eventually(async () => {
      const page = await deliveries(admin, id);
      expect(page.items.some((a) => a.messageId === messageIdOf(first) && a.outcome === 'success')).toBe(true);
      return page.items;
    }, 3000);
    expect(log.every((a) => a.destinationId === id && a.url === receiver.url)).toBe(true);
  });

  it('disabling stops deliveries within 2 s; what was pending is dead-lettered and delivered by a replay after re-enabling', async () => {
    // Calls marked hold get 500 and are retrying when the destination is disabled (backoff at most
    // 300 ms, so each is looked at again soon after).
    const receiver = scope.track(
      await startReceiver({ responder: (req) => ({ status: bodyOf(req).properties?.['hold'] === true ? 500 : 200 }) }),
    );
    const { p, admin } = await setup('live-disable', { deliveryEnv: { DELIVERY_RETRY_BASE_MS: '100', DELIVERY_RETRY_MAX_MS: '300' } });
    const { id } = await createDestination(admin, [receiver.url]);
    await refreshNow(p);

    const held = ['held-1', 'held-2'];
    for (const messageId of held) expect(await track(p.ingestUrl, p.writeKey, { messageId, properties: { hold: true } })).toBe(200);
    await eventually(() => expect(new Set(receiver.requests.map(messageIdOf))).toEqual(new Set(held)), 3000);

    const traffic = scope.track(new Traffic(p.ingestUrl, p.writeKey, 'disable').start());
    await eventually(() => expect(receiver.requests.some((r) => messageIdOf(r).startsWith('disable-'))).toBe(true), 3000);

    const patched = await admin.call('PATCH', `/destinations/${id}`, { enabled: false });
    const disabledAt = Date.now();
    expect(patched.status).toBe(200);
    expect(patched.body.enabled).toBe(false);
    await sleep(PROPAGATION_MS + 1000);
    await traffic.close();
    await sleep(500);

    // Nothing sent more than 2 s after the change reached the receiver, and nothing at all came
    // later than that (held messages' retries included).
    const late = receiver.requests.filter(
      (r) => messageIdOf(r).startsWith('disable-') && traffic.sentAtOf(messageIdOf(r)) > disabledAt + PROPAGATION_MS,
    );
    expect(late.map(messageIdOf)).toEqual([]);
    const lastArrival = Math.max(...receiver.requests.map((r) => r.at));
    timings['disableToLastDelivery'] = lastArrival - disabledAt;
    expect(lastArrival - disabledAt).toBeLessThan(PROPAGATION_MS);
    expect(traffic.sent.every((c) => c.status === 200)).toBe(true);
    expect(traffic.sent.filter((c) => c.sentAt > disabledAt + PROPAGATION_MS).length).toBeGreaterThanOrEqual(5);

    // Pending messages were kept as dead letters, not dropped.
    const letters = await eventually(async () => {
      const found = await deadLetters(admin, id);
      expect(found.map((l) => l.job.call.messageId)).toEqual(expect.arrayContaining(held));
      return found;
    }, 3000);
    expect(letters.every((l) => l.lastError === 'destination is disabled')).toBe(true);
    const delivered = new Set(receiver.requests.filter((r) => bodyOf(r).properties?.['hold'] !== true).map(messageIdOf));
    const deadIds = letters.map((l) => l.job.call.messageId);
    expect(deadIds.filter((m) => delivered.has(m))).toEqual([]);
    const afterDisable = traffic.sent.filter((c) => c.sentAt > disabledAt && !delivered.has(c.messageId)).map((c) => c.messageId);
    timings['disableCallsNotDelivered'] = afterDisable.length;
    timings['disableCallsDeadLettered'] = afterDisable.filter((m) => deadIds.includes(m)).length;

    // Replay refuses while disabled, then delivers every letter once enabled again.
    expect((await admin.call('POST', `/destinations/${id}/replay`, { all: true })).status).toBe(409);
    receiver.respond(() => ({ status: 200 }));
    const before = receiver.requests.length;
    expect((await admin.call('PATCH', `/destinations/${id}`, { enabled: true })).status).toBe(200);
    const replay = await admin.call('POST', `/destinations/${id}/replay`, { all: true });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ replayId: REPLAY_ID, replayed: letters.length, notFound: [] });
    // The held calls' failures opened the destination's circuit breaker: the first replayed call
    // goes as its next probe (at most 5 s after the last one), the rest once it closes.
    await receiver.waitFor(before + letters.length, 10_000);
    await sleep(300);
    const replayed = receiver.requests.slice(before);
    expect(replayed.map(messageIdOf).sort()).toEqual([...deadIds].sort());
    expect(
      replayed.every((r) => r.headers['x-eventrelay-attempt'] === '1' && verifySignature(SECRET, r.body, r.headers['x-signature'])),
    ).toBe(true);
    expect(await deadLetters(admin, id)).toEqual([]);
  });

  it("a deleted source's write key gets 401 within 2 s and keeps getting it; a rotated key likewise, and the new key works at once", async () => {
    const { p, admin } = await setup('live-keys');

    async function pollUntil401(writeKey: string, changedAt: number, label: string): Promise<number> {
      const answers: { at: number; status: number; code: unknown }[] = [];
      const until = changedAt + PROPAGATION_MS + 1200;
      for (let i = 0; Date.now() < until; i++) {
        const res = await post(p.ingestUrl, '/v1/track', { userId: 'u', event: 'Keyed', messageId: `${label}-${i}` }, { writeKey });
        answers.push({ at: Date.now(), status: res.status, code: res.json['code'] });
        await sleep(100);
      }
      const firstRefusal = answers.findIndex((a) => a.status === 401);
      expect(firstRefusal).toBeGreaterThanOrEqual(0);
      const elapsed = answers[firstRefusal]!.at - changedAt;
      expect(elapsed).toBeLessThan(PROPAGATION_MS);
      // It stays refused, across every reload in the following second too.
      const after = answers.slice(firstRefusal);
      expect(after.every((a) => a.status === 401 && a.code === 'unknown_write_key')).toBe(true);
      expect(answers.slice(0, firstRefusal).every((a) => a.status === 200)).toBe(true);
      return elapsed;
    }

    const created = await admin.call('POST', '/sources', { name: 'Second', type: 'web' });
    expect(created.status).toBe(201);
    const second = created.body as { id: string; writeKey: string };
    expect(await track(p.ingestUrl, second.writeKey, { messageId: 'second-1' })).toBe(200);
    const deleted = await admin.call('DELETE', `/sources/${second.id}`);
    const deletedAt = Date.now();
    expect(deleted.status).toBe(204);
    timings['deleteTo401'] = await pollUntil401(second.writeKey, deletedAt, 'deleted');
    expect((await admin.call('GET', `/sources/${second.id}`)).status).toBe(404);

    const third = (await admin.call('POST', '/sources', { name: 'Third', type: 'server' })).body as { id: string; writeKey: string };
    expect(await track(p.ingestUrl, third.writeKey, { messageId: 'third-1' })).toBe(200);
    const rotated = await admin.call('POST', `/sources/${third.id}/rotate-write-key`);
    const rotatedAt = Date.now();
    expect(rotated.status).toBe(200);
    const newKey = rotated.body.writeKey as string;
    expect(newKey).not.toBe(third.writeKey);
    expect(rotated.body).toMatchObject({ id: third.id, name: 'Third', type: 'server' });
    expect(await track(p.ingestUrl, newKey, { messageId: 'third-new-1' })).toBe(200);
    timings['rotateTo401'] = await pollUntil401(third.writeKey, rotatedAt, 'rotated');
    expect(await track(p.ingestUrl, newKey, { messageId: 'third-new-2' })).toBe(200);
    // The pipeline's own source was never affected.
    expect(await track(p.ingestUrl, p.writeKey, { messageId: 'src-test-1' })).toBe(200);
  });

  it('changing the URLs moves deliveries to the new receiver within 2 s, still signed with the kept secret', async () => {
    const first = scope.track(await startReceiver());
    const second = scope.track(await startReceiver());
    const { p, admin } = await setup('live-urls');
    const { id } = await createDestination(admin, [first.url]);
    await refreshNow(p);
    const traffic = scope.track(new Traffic(p.ingestUrl, p.writeKey, 'urls').start());
    await first.waitFor(1, 3000);

    const patched = await admin.call('PATCH', `/destinations/${id}`, { settings: { webhooks: [{ url: second.url }] } });
    const changedAt = Date.now();
    expect(patched.status).toBe(200);
    expect(patched.body.settings).toEqual({ webhooks: [{ url: second.url }], sharedSecret: { set: true, last4: SECRET.slice(-4) } });
    await second.waitFor(1, 5000);
    const movedAfter = second.requests[0]!.at - changedAt;
    timings['urlChangeToFirstDeliveryAtNewUrl'] = movedAfter;
    expect(movedAfter).toBeLessThan(PROPAGATION_MS);
    await sleep(Math.max(0, changedAt + PROPAGATION_MS + 800 - Date.now()));
    await traffic.close();

    const lateCalls = traffic.sent.filter((c) => c.sentAt > changedAt + PROPAGATION_MS).map((c) => c.messageId);
    expect(lateCalls.length).toBeGreaterThanOrEqual(5);
    // Every call sent after the 2 s went to the new URL, none to the old one.
    await eventually(() => expect(second.requests.map(messageIdOf)).toEqual(expect.arrayContaining(lateCalls)), 3000);
    expect(first.requests.map(messageIdOf).filter((m) => lateCalls.includes(m))).toEqual([]);
    timings['urlChangeToLastDeliveryAtOldUrl'] = Math.max(...first.requests.map((r) => r.at)) - changedAt;
    expect(second.requests.every((r) => verifySignature(SECRET, r.body, r.headers['x-signature']))).toBe(true);
  });

  describe('dead letters and replay (retry window 1.5 s)', () => {
    const deliveryEnv = { RETRY_WINDOW_MS: '1500', DELIVERY_RETRY_BASE_MS: '100', DELIVERY_RETRY_MAX_MS: '200' };

    async function deadLetterOf(admin: TestAdmin, destinationId: string, messageId: string): Promise<DeadLetter> {
      return eventually(async () => {
        const letter = (await deadLetters(admin, destinationId)).find((l) => l.job.call.messageId === messageId);
        expect(letter).toBeDefined();
        return letter!;
      }, 5000);
    }

    it('a dead-lettered message is replayed by messageId once the receiver is healthy; since and all replay the rest', async () => {
      const receiver: Receiver = scope.track(await startReceiver({ responder: () => ({ status: 500 }) }));
      const { p, admin } = await setup('live-replay', { deliveryEnv });
      const { id } = await createDestination(admin, [receiver.url]);
      await refreshNow(p);

      expect(await track(p.ingestUrl, p.writeKey, { messageId: 'dead-1', properties: { n: 1 } })).toBe(200);
      expect(await track(p.ingestUrl, p.writeKey, { messageId: 'dead-2', properties: { n: 2 } })).toBe(200);
      await sleep(400);
      expect(await track(p.ingestUrl, p.writeKey, { messageId: 'dead-3', properties: { n: 3 } })).toBe(200);
      const [l1, l2, l3] = [
        await deadLetterOf(admin, id, 'dead-1'),
        await deadLetterOf(admin, id, 'dead-2'),
        await deadLetterOf(admin, id, 'dead-3'),
      ];
      expect(l1.lastError).toMatch(/retry window of 1\.5 s passed.*HTTP 500/);
      expect(l1.attempts).toBeGreaterThanOrEqual(2);
      expect(l1.urls).toEqual([{ url: receiver.url, error: 'HTTP 500' }]);
      expect(Date.parse(l3.deadAt)).toBeGreaterThan(Date.parse(l2.deadAt));
      // Newest first (dead-1 and dead-2 died within a few ms of each other, in either order).
      const listed = (await deadLetters(admin, id)).map((l) => l.job.call.messageId);
      expect(listed[0]).toBe('dead-3');
      expect(new Set(listed.slice(1))).toEqual(new Set(['dead-1', 'dead-2']));
      // Pages of two: the cursor walks the three letters in the same order, once each.
      const pageOne = await admin.call('GET', `/destinations/${id}/dead-letters?limit=2`);
      expect(pageOne.body.items.map((l: DeadLetter) => l.job.call.messageId)).toEqual(listed.slice(0, 2));
      const pageTwo = await admin.call(
        'GET',
        `/destinations/${id}/dead-letters?limit=2&cursor=${encodeURIComponent(pageOne.body.nextCursor as string)}`,
      );
      expect(pageTwo.body.items.map((l: DeadLetter) => l.job.call.messageId)).toEqual(listed.slice(2));
      expect(pageTwo.body.nextCursor).toBeNull();
      const firstBody = receiver.requests.find((r) => messageIdOf(r) === 'dead-1')!.body;

      receiver.respond(() => ({ status: 200 }));
      let before = receiver.requests.length;
      const byId = await admin.call('POST', `/destinations/${id}/replay`, { messageIds: ['dead-1'] });
      expect(byId.status).toBe(200);
      expect(byId.body).toEqual({ replayId: REPLAY_ID, replayed: 1, notFound: [] });
      // The failures above opened the destination's circuit breaker: the replayed call goes as its
      // next probe, at most 5 s after the last one (docs/delivery.md, "The circuit breaker").
      const [again] = (await receiver.waitFor(before + 1, 8000)).slice(before);
      expect(messageIdOf(again!)).toBe('dead-1');
      expect(again!.headers['x-eventrelay-attempt']).toBe('1');
      expect(again!.body.equals(firstBody)).toBe(true);
      expect(bodyOf(again!)).toMatchObject({ type: 'track', event: 'Live', properties: { n: 1 } });
      expect(verifySignature(SECRET, again!.body, again!.headers['x-signature'])).toBe(true);
      expect((await deadLetters(admin, id)).map((l) => l.job.call.messageId)).toEqual(['dead-3', 'dead-2']);
      expect((await admin.call('POST', `/destinations/${id}/replay`, { messageIds: ['dead-1'] })).body).toEqual({
        replayId: REPLAY_ID,
        replayed: 0,
        notFound: ['dead-1'],
      });

      // since: only what died at or after the time given (dead-3's own deadAt: inclusive).
      before = receiver.requests.length;
      const since = await admin.call('POST', `/destinations/${id}/replay`, { since: l3.deadAt });
      expect(since.body).toEqual({ replayId: REPLAY_ID, replayed: 1, notFound: [] });
      await receiver.waitFor(before + 1, 3000);
      await sleep(200);
      expect(receiver.requests.slice(before).map(messageIdOf)).toEqual(['dead-3']);
      expect((await deadLetters(admin, id)).map((l) => l.job.call.messageId)).toEqual(['dead-2']);

      before = receiver.requests.length;
      const all = await admin.call('POST', `/destinations/${id}/replay`, { all: true });
      expect(all.body).toEqual({ replayId: REPLAY_ID, replayed: 1, notFound: [] });
      await receiver.waitFor(before + 1, 3000);
      await sleep(200);
      expect(receiver.requests.slice(before).map(messageIdOf)).toEqual(['dead-2']);
      expect(await deadLetters(admin, id)).toEqual([]);
      expect((await admin.call('POST', `/destinations/${id}/replay`, { all: true })).body).toEqual({
        replayId: REPLAY_ID,
        replayed: 0,
        notFound: [],
      });
    });

    it('a replayed message gets a fresh retry window: retried from attempt 1 again, then dead-lettered again', async () => {
      const receiver = scope.track(await startReceiver({ responder: () => ({ status: 500 }) }));
      const { p, admin } = await setup('live-rewindow', { deliveryEnv });
      const { id } = await createDestination(admin, [receiver.url]);
      await refreshNow(p);

      expect(await track(p.ingestUrl, p.writeKey, { messageId: 'again-1' })).toBe(200);
      const first = await deadLetterOf(admin, id, 'again-1');
      await eventually(
        async () => expect((await deliveries(admin, id)).items.filter((a) => a.messageId === 'again-1')).toHaveLength(first.attempts),
        2000,
      );

      const replayedAt = Date.now();
      expect((await admin.call('POST', `/destinations/${id}/replay`, { messageIds: ['again-1'] })).body).toEqual({
        replayId: REPLAY_ID,
        replayed: 1,
        notFound: [],
      });
      const second = await eventually(async () => {
        const letter = (await deadLetters(admin, id)).find((l) => l.job.call.messageId === 'again-1');
        expect(letter).toBeDefined();
        expect(letter!.deadAt).not.toBe(first.deadAt);
        return letter!;
      }, 5000);
      expect(Date.parse(second.firstAttemptAt)).toBeGreaterThanOrEqual(replayedAt - 5);
      expect(Date.parse(second.deadAt) - Date.parse(second.firstAttemptAt)).toBeGreaterThanOrEqual(1500);
      expect(second.attempts).toBeGreaterThanOrEqual(2);

      const secondRun = await eventually(async () => {
        const run = (await deliveries(admin, id)).items.filter((a) => a.messageId === 'again-1' && Date.parse(a.at) >= replayedAt - 5);
        expect(run).toHaveLength(second.attempts);
        return run;
      }, 2000);
      // Newest first: attempt numbers count down to 1 again.
      expect(secondRun.map((a) => a.attempt)).toEqual(Array.from({ length: second.attempts }, (_, i) => second.attempts - i));
      expect(secondRun.every((a) => a.outcome === 'retryable' && a.status === 500)).toBe(true);
      const attemptHeaders = receiver.requests.filter((r) => r.at >= replayedAt).map((r) => r.headers['x-eventrelay-attempt']);
      expect(attemptHeaders.slice(0, 2)).toEqual(['1', '2']);
    });
  });

  it('GET deliveries: newest first, status filters, and cursor pages that see every attempt once while new ones arrive', async () => {
    // ok → 200; perm → 404 (permanent); flaky → 500 on the first attempt, then 200.
    const receiver = scope.track(
      await startReceiver({
        responder: (req) => {
          const kind = bodyOf(req).properties?.['kind'];
          if (kind === 'perm') return { status: 404 };
          if (kind === 'flaky') return { status: req.headers['x-eventrelay-attempt'] === '1' ? 500 : 200 };
          return { status: 200 };
        },
      }),
    );
    const { p, admin } = await setup('live-log', { deliveryEnv: { DELIVERY_RETRY_BASE_MS: '50', DELIVERY_RETRY_MAX_MS: '100' } });
    const { id } = await createDestination(admin, [receiver.url]);
    await refreshNow(p);

    let n = 0;
    const send = async (kind: string) =>
      expect(await track(p.ingestUrl, p.writeKey, { messageId: `log-${++n}-${kind}`, properties: { kind } })).toBe(200);
    const logLength = async (length: number) =>
      eventually(async () => expect((await deliveries(admin, id)).items).toHaveLength(length), 5000);
    for (const kind of ['ok', 'flaky', 'perm', 'ok', 'flaky', 'ok', 'perm', 'ok']) {
      await send(kind);
      await sleep(20);
    }
    await logLength(10);
    const all = (await deliveries(admin, id)).items;
    expect(all.filter((a) => a.outcome === 'success')).toHaveLength(6);
    expect(all.filter((a) => a.outcome === 'retryable')).toHaveLength(2);
    expect(all.filter((a) => a.outcome === 'permanent')).toHaveLength(2);

    // Newest first: an attempt is logged when it ends, so end times never increase down the list,
    // and a message's later attempts come before its earlier ones.
    const ends = all.map((a) => Date.parse(a.at) + a.latencyMs);
    expect(ends).toEqual([...ends].sort((a, b) => b - a));
    for (const messageId of new Set(all.map((a) => a.messageId))) {
      const numbers = all.filter((a) => a.messageId === messageId).map((a) => a.attempt);
      expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => numbers.length - i));
    }

    for (const [status, match] of [
      ['success', (a: DeliveryAttempt) => a.outcome === 'success'],
      ['failed', (a: DeliveryAttempt) => a.outcome !== 'success'],
      ['retryable', (a: DeliveryAttempt) => a.outcome === 'retryable'],
      ['permanent', (a: DeliveryAttempt) => a.outcome === 'permanent'],
    ] as const) {
      const page = await deliveries(admin, id, `status=${status}&limit=1000`);
      expect(page.items).toEqual(all.filter(match));
      expect(page.items.length).toBeGreaterThan(0);
      expect(page.nextCursor).toBeNull();
    }
    expect((await deliveries(admin, id, 'status=permanent')).items.every((a) => a.status === 404 && a.error === 'HTTP 404')).toBe(true);

    // Walk all attempts 3 at a time; before each further page two more calls are delivered.
    const walked: DeliveryAttempt[] = [];
    let page = await deliveries(admin, id, 'limit=3');
    expect(page.items).toEqual(all.slice(0, 3));
    walked.push(...page.items);
    let length = all.length;
    while (page.nextCursor !== null) {
      await send('ok');
      await send('ok');
      await logLength((length += 2));
      page = await deliveries(admin, id, `limit=3&cursor=${encodeURIComponent(page.nextCursor)}`);
      expect(page.items.length).toBeGreaterThan(0);
      expect(page.items.length).toBeLessThanOrEqual(3);
      walked.push(...page.items);
    }
    expect(walked).toEqual(all);

    // The same with a filter: failed attempts 1 at a time while new failures arrive.
    const failedNow = (await deliveries(admin, id, 'status=failed&limit=1000')).items;
    const walkedFailed: DeliveryAttempt[] = [];
    page = await deliveries(admin, id, 'status=failed&limit=1');
    walkedFailed.push(...page.items);
    while (page.nextCursor !== null) {
      await send('perm');
      await logLength((length += 1));
      page = await deliveries(admin, id, `status=failed&limit=1&cursor=${encodeURIComponent(page.nextCursor)}`);
      walkedFailed.push(...page.items);
    }
    expect(walkedFailed).toEqual(failedNow);
    // The new attempts really were there: the first page now starts with them.
    expect((await deliveries(admin, id, 'status=permanent&limit=1')).items[0]!.messageId).toBe(`log-${n}-perm`);
  });

  it('the event debugger lists accepted and rejected calls newest first, with secrets redacted', async () => {
    const { p, admin } = await setup('live-events');
    const accepted = await post(
      p.ingestUrl,
      '/v1/track',
      {
        userId: 'user-ev',
        event: 'Signed Up',
        messageId: 'ev-1',
        properties: { password: 'hunter2', plan: 'pro' },
        context: { apiKey: 'k' },
      },
      { writeKey: p.writeKey },
    );
    expect(accepted.status).toBe(200);
    const batch = await post(
      p.ingestUrl,
      '/v1/batch',
      {
        batch: [
          { type: 'track', userId: 'user-ev', event: 'Batch OK', messageId: 'ev-2', properties: { password: 'hunter2' } },
          { type: 'track', userId: 'user-ev', messageId: 'ev-3', properties: { password: 'hunter2' } },
        ],
      },
      { writeKey: p.writeKey },
    );
    expect(batch.status).toBe(200);
    expect(batch.json['rejected']).toEqual([expect.objectContaining({ index: 1, code: 'invalid_event' })]);
    // Authenticated by the body's writeKey: that must not be shown either.
    const single = await post(p.ingestUrl, '/v1/track', {
      userId: 'user-ev',
      messageId: 'ev-4',
      properties: { password: 'hunter2' },
      writeKey: p.writeKey,
    });
    expect(single.status).toBe(400);
    expect(single.json['code']).toBe('invalid_event');

    const res = await eventually(async () => {
      const answer = await admin.call('GET', '/sources/src-test/events');
      expect(answer.status).toBe(200);
      expect(answer.body.items).toHaveLength(4);
      return answer;
    }, 1000);
    expect(res.text).not.toContain('hunter2');
    expect(res.text).not.toContain(p.writeKey);
    const items = res.body.items as DebugEvent[];
    const calls = items.map((e) => e.call as Record<string, unknown> | undefined);

    // Newest first: the invalid single call, then the batch's two items, then the first call.
    expect(calls[0]?.['messageId']).toBe('ev-4');
    expect(new Set([calls[1]?.['messageId'], calls[2]?.['messageId']])).toEqual(new Set(['ev-2', 'ev-3']));
    expect(calls[3]?.['messageId']).toBe('ev-1');
    const at = items.map((e) => Date.parse(e.at));
    expect(at).toEqual([...at].sort((a, b) => b - a));

    const byMessage = new Map(items.map((e) => [(e.call as Record<string, unknown>)['messageId'], e]));
    expect(byMessage.get('ev-1')).toMatchObject({
      outcome: 'accepted',
      call: { type: 'track', event: 'Signed Up', properties: { password: '[redacted]', plan: 'pro' }, context: { apiKey: '[redacted]' } },
    });
    expect(byMessage.get('ev-1')!.code).toBeUndefined();
    expect(byMessage.get('ev-2')).toMatchObject({
      outcome: 'accepted',
      call: { event: 'Batch OK', properties: { password: '[redacted]' } },
    });
    expect(byMessage.get('ev-3')).toMatchObject({
      outcome: 'rejected',
      code: 'invalid_event',
      message: expect.stringMatching(/^batch\[1\]: .*event/),
      call: { properties: { password: '[redacted]' } },
    });
    expect(byMessage.get('ev-4')).toMatchObject({
      outcome: 'rejected',
      code: 'invalid_event',
      message: expect.stringMatching(/event/),
      call: { properties: { password: '[redacted]' }, writeKey: '[redacted]' },
    });

    const firstTwo = await admin.call('GET', '/sources/src-test/events?limit=2');
    expect(firstTwo.body.items).toEqual(items.slice(0, 2));
    expect(firstTwo.body.nextCursor).toEqual(expect.any(String));
    const rest = await admin.call(
      'GET',
      `/sources/src-test/events?limit=2&cursor=${encodeURIComponent(firstTwo.body.nextCursor as string)}`,
    );
    expect(rest.body.items).toEqual(items.slice(2));
    expect(rest.body.nextCursor).toBeNull();
  });
});
