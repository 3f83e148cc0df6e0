/**
 * Regulations through the whole pipeline (docs/spec.md §6): the admin API, the real intake,
 * router, webhook-delivery and audiences service in this process, real receivers, real Redis
 * under a fresh prefix per pipeline.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  batchDeliveryJobId,
  callDeliveryId,
  queueCatalog,
  type DeleteNotice,
  type DeliverJob,
  type Regulation,
  type RegulationJob,
} from '@eventrelay/config';
import { eventually, type Receiver, startReceiver } from '@eventrelay/testkit';
import { startTestAdmin, type TestAdmin } from '../support/admin';
import { post } from '../support/ingest';
import { startTestPipeline, trackCall, webhookDestination, type PipelineOptions, type TestPipeline } from '../support/pipeline';
import { testScope } from '../support/scope';

const messageIds = (r: Receiver) => r.requests.map((req) => req.headers['x-eventrelay-message-id']);

async function regulate(admin: TestAdmin, body: Record<string, unknown>): Promise<string> {
  const res = await admin.call('POST', '/regulations', { subjectType: 'USER_ID', ...body });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

/** Polls GET /regulations/:id as a client would, and returns as soon as it says `finished`. */
async function finished(admin: TestAdmin, id: string): Promise<Regulation> {
  return eventually(
    async () => {
      const res = await admin.call<Regulation>('GET', `/regulations/${id}`);
      expect(res.body.status).toBe('finished');
      return res.body;
    },
    15_000,
    5,
  );
}

/** Waits until no job of the queue is waiting, delayed or running. */
async function drained(queue: Queue): Promise<void> {
  await eventually(async () =>
    expect(await queue.getJobCounts('wait', 'prioritized', 'delayed', 'active')).toEqual({
      wait: 0,
      prioritized: 0,
      delayed: 0,
      active: 0,
    }),
  );
}

/** Every key under the prefix with what it holds, as text: what a search for personal data sees. */
async function everythingUnder(redis: Redis, prefix: string): Promise<{ key: string; text: string }[]> {
  const found: { key: string; text: string }[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      const value =
        type === 'string'
          ? await redis.get(key)
          : type === 'hash'
            ? await redis.hgetall(key)
            : type === 'list'
              ? await redis.lrange(key, 0, -1)
              : type === 'set'
                ? await redis.smembers(key)
                : type === 'zset'
                  ? await redis.zrange(key, 0, -1, 'WITHSCORES')
                  : type === 'stream'
                    ? await redis.xrange(key, '-', '+')
                    : `(a ${type})`;
      found.push({ key, text: JSON.stringify(value) });
    }
  } while (cursor !== '0');
  return found;
}

/** The value of a labelled counter in a registry of the pipeline, 0 when it has no such series. */
async function counter(registry: TestPipeline['deliveryRegistry'], name: string, labels: Record<string, string>): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  const series = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return series?.value ?? 0;
}

describe('regulations end to end', () => {
  const scope = testScope();

  /** The pipeline with ingest and audiences, one destination `hook` to `receiver`, and the admin API on its prefix. */
  async function pipeline(
    label: string,
    receiver: Receiver,
    { track = true, ...options }: PipelineOptions & { track?: boolean } = {},
  ): Promise<{ p: TestPipeline; admin: TestAdmin }> {
    const p = await startTestPipeline({
      label,
      ingest: true,
      audiences: true,
      destinations: [webhookDestination('hook', [receiver.url])],
      ...options,
    });
    const admin = await startTestAdmin({ prefix: p.prefix }).catch(async (err: unknown) => {
      await p.close();
      throw err;
    });
    if (track) {
      scope.track(p);
      scope.track(admin);
    }
    return { p, admin };
  }

  it('no call sent after a SUPPRESS regulation reports finished is delivered, on a system’s first suppression too (5 fresh systems)', async () => {
    for (let run = 0; run < 5; run++) {
      const receiver = await startReceiver();
      const { p, admin } = await pipeline(`reg-suppress-first-${run}`, receiver, { track: false });
      try {
        const id = await regulate(admin, { regulationType: 'SUPPRESS', subjectIds: ['quiet-user'] });
        await finished(admin, id);
        // At once, through the intake: one call of the suppressed user, one of somebody else.
        const sent = await post(
          p.ingestUrl,
          '/v1/batch',
          {
            batch: [
              { type: 'track', event: 'After', messageId: `quiet-${run}`, userId: 'quiet-user' },
              { type: 'track', event: 'After', messageId: `loud-${run}`, userId: 'loud-user' },
            ],
          },
          { writeKey: p.writeKey },
        );
        expect(sent.status).toBe(200);
        await receiver.waitFor(1);
        await drained(p.routeQueue);
        await drained(p.deliverQueue);
        expect({ run, delivered: messageIds(receiver) }).toEqual({ run, delivered: [`loud-${run}`] });
      } finally {
        await admin.close();
        await p.close();
        await receiver.close();
      }
    }
  }, 120_000);

  it('DELETE drops the user’s calls still queued (a job retrying them, a batch job not run yet) unsent, delivers everyone else’s and the delete notice, and leaves none of the user’s calls in Redis', async () => {
    const USER = 'erased-user-5c1d';
    let down = true;
    let ahead = 0;
    const receiver = scope.track(await startReceiver({ responder: () => ({ status: down ? 503 : 200 }) }));
    const { p, admin } = await pipeline('reg-delete-queued', receiver, {
      // A failed round is retried 5 minutes later (full jitter drawn at 0.5 of 10 minutes): the
      // retrying job waits until the test moves the clock on and promotes it. No profiles: this
      // test is about delivery jobs.
      deliveryEnv: { DELIVERY_RETRY_BASE_MS: '600000' },
      random: () => 0.5,
      clock: () => Date.now() + ahead,
      routerEnv: { ROUTER_FEED_PROFILES: 'false' },
    });
    const retrying = batchDeliveryJobId('hook', 'batch-1');
    const unrun = batchDeliveryJobId('hook', 'batch-2');
    const idOf = (r: Receiver['requests'][number]) => String(r.headers['x-eventrelay-message-id']);

    // batch-1: its first round fails (503), so its calls sit in the job with their retry state.
    await p.route(
      [trackCall('e-1', { userId: USER }), trackCall('o-1', { userId: 'other-user' }), trackCall('e-2', { userId: USER })],
      'batch-1',
    );
    await receiver.waitFor(3);
    await eventually(async () => {
      const job = await p.deliverQueue.getJob(retrying);
      expect(await job?.getState()).toBe('delayed');
      const held = job?.data && 'calls' in job.data ? job.data.calls : [];
      expect(held.map((c) => [c.call.messageId, c.retry?.attempt])).toEqual([
        ['e-1', 1],
        ['o-1', 1],
        ['e-2', 1],
      ]);
    });
    // batch-2: routed while the deliver queue is paused, so its batch job has not run.
    await p.deliverQueue.pause();
    await p.route([trackCall('e-3', { userId: USER }), trackCall('o-2', { userId: 'other-user' })], 'batch-2');
    // batch-2b: only the user's calls, so its job ends with nothing to send.
    await p.route([trackCall('e-5', { userId: USER }), trackCall('e-6', { userId: USER })], 'batch-2b');
    await eventually(async () => expect(['waiting', 'paused']).toContain(await p.deliverQueue.getJobState(unrun)));
    await eventually(async () =>
      expect(['waiting', 'paused']).toContain(await p.deliverQueue.getJobState(batchDeliveryJobId('hook', 'batch-2b'))),
    );
    expect(await p.admin.hexists(p.batches.key('batch-2'), 'd:hook')).toBe(1);
    const holdingUser = async () =>
      (await everythingUnder(p.admin, p.prefix)).filter((k) => k.key.includes(USER) || k.text.includes(USER)).map((k) => k.key);
    // The search finds the user's calls while they are queued (in the retrying job and the batch),
    // and in the attempt log, which keeps the bodies of the retrying job's failed attempts.
    const attemptLog = `${p.prefix}:attempts:hook`;
    expect((await p.attempts('hook')).filter((a) => a.userId === USER).map((a) => a.messageId)).toEqual(['e-2', 'e-1']);
    expect((await holdingUser()).sort()).toEqual(
      [`${p.prefix}:deliver:${retrying}`, p.batches.key('batch-2'), p.batches.key('batch-2b'), attemptLog].sort(),
    );

    const id = await regulate(admin, { regulationType: 'DELETE', subjectIds: [USER] });
    const record = await finished(admin, id);
    expect(record.counts).toMatchObject({ subjectsDone: 1, deleteNotices: 1 });

    down = false;
    const before = receiver.requests.length;
    await p.deliverQueue.resume();
    ahead = 10 * 60_000;
    await (await p.deliverQueue.getJob(retrying))!.promote();
    // The user comes back after the erasure: that call is delivered as any other.
    const back = new Date(Date.parse(record.finishedAt!) + 1).toISOString();
    await p.route([trackCall('e-4', { userId: USER, receivedAt: back })], 'batch-3');
    await receiver.waitFor(before + 4);
    await drained(p.routeQueue);
    await drained(p.deliverQueue);

    const after = receiver.requests.slice(before);
    expect(after.map(idOf).sort()).toEqual(['e-4', 'o-1', 'o-2', expect.stringMatching(new RegExp(`^del-${id}-`))].sort());
    expect(after.find((r) => idOf(r) === 'o-1')?.headers['x-eventrelay-attempt']).toBe('2');
    expect(after.filter((r) => idOf(r).startsWith('del-')).map((r) => JSON.parse(r.body.toString('utf8')).userId)).toEqual([USER]);
    expect(await counter(p.deliveryRegistry, 'eventrelay_delivery_erased_total', { destination: 'hook' })).toBe(5);
    expect((await admin.call<Regulation>('GET', `/regulations/${id}`)).body.receipts).toEqual({
      notices: 1,
      delivered: 1,
      deadLettered: 0,
      dropped: 0,
      pending: 0,
      destinations: [{ destinationId: 'hook', notices: 1, delivered: 1, deadLettered: 0, dropped: 0, pending: 0 }],
    });
    // Not dead-lettered either, and the batches are gone (released as usual).
    expect(await p.deadLetters('hook')).toEqual([]);
    expect(
      await p.admin.exists(p.batches.key('batch-1'), p.batches.key('batch-2'), p.batches.key('batch-2b'), p.batches.key('batch-3')),
    ).toBe(0);
    // The attempt log keeps the outcome of the user's attempts without their bodies; only the call
    // received after the erasure names the user there, and the delete notice's bodies are not kept.
    const attempts = await p.attempts('hook');
    const erased = attempts.filter((a) => ['e-1', 'e-2'].includes(a.messageId));
    expect(erased.map((a) => [a.messageId, a.outcome, a.erased, a.userId, a.request?.body])).toEqual([
      ['e-2', 'retryable', true, undefined, ''],
      ['e-1', 'retryable', true, undefined, ''],
    ]);
    expect(attempts.find((a) => a.messageId.startsWith('del-'))).toMatchObject({ outcome: 'success', erased: true, request: { body: '' } });
    expect(attempts.filter((a) => JSON.stringify(a).includes(USER)).map((a) => a.messageId)).toEqual(['e-4']);
    expect((await holdingUser()).filter((key) => key !== attemptLog)).toEqual([]);
  }, 60_000);

  it('deletion receipts: per destination, notices delivered, dead-lettered (4xx) and dropped (destination deleted) counted once, through a retried regulation job, a delivery job run again and replays', async () => {
    let refuse = true;
    const ok = scope.track(await startReceiver());
    const picky = scope.track(await startReceiver({ responder: () => ({ status: refuse ? 400 : 200 }) }));
    const gone = scope.track(await startReceiver());
    const p = scope.track(
      await startTestPipeline({
        label: 'reg-receipts',
        audiences: true,
        destinations: [
          webhookDestination('hook-ok', [ok.url]),
          webhookDestination('hook-picky', [picky.url]),
          webhookDestination('hook-gone', [gone.url]),
        ],
      }),
    );
    const admin = scope.track(await startTestAdmin({ prefix: p.prefix }));
    const request: RegulationJob['request'] = { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['u-1', 'u-2'] };
    // The notices wait in the paused queue while hook-gone is deleted.
    await p.deliverQueue.pause();
    const id = await regulate(admin, { ...request });
    const record = await finished(admin, id);
    expect((await admin.call('DELETE', '/destinations/hook-gone')).status).toBe(204);
    await p.delivery!.refreshConfig();
    await p.deliverQueue.resume();
    await ok.waitFor(2);
    await picky.waitFor(2);
    await drained(p.deliverQueue);
    const receipts = async () => (await admin.call<Regulation>('GET', `/regulations/${id}`)).body;
    const first = {
      notices: 6,
      delivered: 2,
      deadLettered: 2,
      dropped: 2,
      pending: 0,
      destinations: [
        { destinationId: 'hook-gone', notices: 2, delivered: 0, deadLettered: 0, dropped: 2, pending: 0 },
        { destinationId: 'hook-ok', notices: 2, delivered: 2, deadLettered: 0, dropped: 0, pending: 0 },
        { destinationId: 'hook-picky', notices: 2, delivered: 0, deadLettered: 2, dropped: 0, pending: 0 },
      ],
    };
    await eventually(async () => expect((await receipts()).receipts).toEqual(first));
    expect((await receipts()).counts.deleteNotices).toBe(6);
    expect(gone.requests).toEqual([]);
    expect(await p.deadLetters('hook-picky')).toHaveLength(2);

    // The regulation job run again from its first page, as after a crash before it saved the page.
    await p.admin.hset(
      `${p.prefix}:reg:regulations`,
      id,
      JSON.stringify({
        ...record,
        status: 'running',
        finishedAt: undefined,
        counts: { subjectsDone: 0, deleteNotices: 0, profilesErased: 0 },
      }),
    );
    const regulations = new Queue<RegulationJob>(queueCatalog.regulation.name, { connection: p.admin, prefix: p.prefix });
    try {
      await regulations.add(queueCatalog.regulation.jobName, { id, createdAt: record.createdAt, request }, { jobId: id });
    } finally {
      await regulations.close();
    }
    await finished(admin, id);
    await drained(p.deliverQueue);
    expect((await receipts()).receipts).toEqual(first);

    // A delivered notice's job run again (a crash after its POST): delivered twice, counted once.
    const delivered = ok.requests[0]!;
    const body = JSON.parse(delivered.body.toString('utf8')) as { userId: string; timestamp: string };
    const notice: DeleteNotice = {
      type: 'delete',
      messageId: String(delivered.headers['x-eventrelay-message-id']),
      userId: body.userId,
      timestamp: body.timestamp,
      regulationId: id,
    };
    const before = ok.requests.length;
    const again: DeliverJob = { destinationId: 'hook-ok', calls: [{ sourceId: p.source.id, call: notice }] };
    await p.deliverQueue.add(queueCatalog.deliver.jobName, again, { jobId: callDeliveryId('hook-ok', p.source.id, notice.messageId) });
    await ok.waitFor(before + 1);
    await drained(p.deliverQueue);
    expect((await receipts()).receipts).toEqual(first);

    // Dead letters replayed while the receiver still refuses them: dead again, counted once.
    expect((await admin.call('POST', '/destinations/hook-picky/replay', { all: true })).status).toBe(200);
    await picky.waitFor(4);
    await drained(p.deliverQueue);
    expect((await receipts()).receipts).toEqual(first);

    // Replayed once the receiver takes them: they move from dead-lettered to delivered.
    refuse = false;
    expect((await admin.call('POST', '/destinations/hook-picky/replay', { all: true })).status).toBe(200);
    await picky.waitFor(6);
    await drained(p.deliverQueue);
    await eventually(async () =>
      expect((await receipts()).receipts).toEqual({
        ...first,
        delivered: 4,
        deadLettered: 0,
        destinations: [
          first.destinations[0],
          first.destinations[1],
          { destinationId: 'hook-picky', notices: 2, delivered: 2, deadLettered: 0, dropped: 0, pending: 0 },
        ],
      }),
    );
    expect(await p.deadLetters('hook-picky')).toEqual([]);
  });
});
