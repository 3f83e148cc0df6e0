/**
 * The router feeds profiles only for the sources some audience reads (docs/audiences.md, "Where
 * the work runs"): router and audiences service started through their real start functions, real
 * Redis under a unique prefix, audiences written to the config store as the admin API writes them.
 */
import { Queue } from 'bullmq';
import { queueCatalog, type Audience, type ProfileJob } from '@eventrelay/config';
import { eventually } from '@eventrelay/testkit';
import { startTestPipeline, trackCall, type TestPipeline } from '../../../test/support/pipeline';
import { testScope } from '../../../test/support/scope';

const OTHER = 'src-other';

function identify(messageId: string, userId: string, traits: Record<string, unknown>) {
  const ts = new Date().toISOString();
  return { type: 'identify' as const, messageId, userId, traits, timestamp: ts, receivedAt: ts };
}

const trialUsers = (sourceIds: string[]): Audience => ({
  id: 'trial',
  name: 'Trial Users',
  sourceIds,
  destinationIds: [],
  condition: { trait: { key: 'plan', equals: 'trial' } },
});

describe('router: profiles only for the sources some audience reads (real Redis)', () => {
  const scope = testScope();

  async function setup(label: string): Promise<{ p: TestPipeline; profileQueue: Queue<ProfileJob> }> {
    const p = scope.track(await startTestPipeline({ label, audiences: true, delivery: false }));
    await p.store.apply({
      sources: [p.source, { id: OTHER, name: 'Other', type: 'web', writeKey: `wk_other_${p.prefix.replace(/\W/g, '')}` }],
      destinations: [],
      audiences: [],
    });
    await p.router.refreshConfig();
    const profileQueue = scope.track(new Queue<ProfileJob>(queueCatalog.profile.name, { connection: p.admin, prefix: p.prefix }));
    return { p, profileQueue };
  }

  async function routed(p: TestPipeline, batchId: string): Promise<void> {
    await eventually(async () => expect(['completed', 'unknown']).toContain(await p.routeQueue.getJobState(batchId)));
  }

  /** Every profile job ever added and still known, in any state (finished ones are removed at once). */
  async function profileJobs(queue: Queue<ProfileJob>): Promise<number> {
    const counts = await queue.getJobCounts('wait', 'prioritized', 'delayed', 'active', 'completed', 'failed');
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  const indexed = (p: TestPipeline) => p.admin.zrange(`${p.prefix}:prof:index`, 0, -1);

  it('creates no profile for a source no audience reads', async () => {
    const { p, profileQueue } = await setup('feed-none');
    await p.route([identify('i-1', 'u-1', { plan: 'trial' }), trackCall('t-1', { userId: 'u-1' })], 'b-1');
    await p.route([trackCall('t-2', { userId: 'u-2' })], 'b-2', OTHER);
    await routed(p, 'b-1');
    await routed(p, 'b-2');
    // The profile jobs would have been added with the route job's commit, and a finished one has
    // written its profile before it was removed: looking at the queue, then the index, misses none.
    expect(await profileJobs(profileQueue)).toBe(0);
    expect(await indexed(p)).toEqual([]);
    expect(await p.admin.exists(`${p.prefix}:prof:u:u-1`, `${p.prefix}:prof:u:u-2`)).toBe(0);
  });

  it('an audience created later gathers from then on, for its own sources only, without a restart', async () => {
    const { p, profileQueue } = await setup('feed-later');
    await p.route([identify('before', 'u-before', { plan: 'trial' })], 'b-before');
    await routed(p, 'b-before');

    // As the admin API writes it; the router and the audiences service notice the new config
    // version (refreshConfig runs the same check their watches run every second).
    await p.store.apply({ sources: [p.source], destinations: [], audiences: [trialUsers([p.source.id])] });
    await p.router.refreshConfig();
    await p.audiences!.refreshConfig();
    await p.route(
      [identify('after', 'u-after', { plan: 'trial' }), identify('after-2', 'u-before', { email: 'b@example.com' })],
      'b-after',
    );
    await p.route([identify('other', 'u-other', { plan: 'trial' })], 'b-other', OTHER);

    await eventually(async () => expect(await p.admin.smembers(`${p.prefix}:aud:trial:members`)).toEqual(['u-after']));
    await routed(p, 'b-other');
    // Every profile job added is done (the queue is empty, and a finished job has written its profile).
    await eventually(async () => expect(await profileJobs(profileQueue)).toBe(0));
    // u-before's call from before the audience fed nothing: its profile holds only the later call.
    expect((await indexed(p)).sort()).toEqual(['u-after', 'u-before']);
    expect(await p.admin.hget(`${p.prefix}:prof:u:u-before`, 't:src-test:plan')).toBeNull();
    expect(await p.admin.hget(`${p.prefix}:prof:u:u-before`, 't:src-test:email')).toBe('"b@example.com"');
    // src-other is read by no audience: its call fed nothing.
    expect(await p.admin.exists(`${p.prefix}:prof:u:u-other`)).toBe(0);
  });
});
