/**
 * Regulations through the whole pipeline (docs/spec.md §6): the admin API, the real intake,
 * router, webhook-delivery and audiences service in this process, real receivers, real Redis
 * under a fresh prefix per pipeline.
 */
import type { Queue } from 'bullmq';
import type { Regulation } from '@eventrelay/config';
import { eventually, type Receiver, startReceiver } from '@eventrelay/testkit';
import { startTestAdmin, type TestAdmin } from '../support/admin';
import { post } from '../support/ingest';
import { startTestPipeline, webhookDestination, type PipelineOptions, type TestPipeline } from '../support/pipeline';
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
});
