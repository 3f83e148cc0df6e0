/**
 * Audiences end to end (docs/spec.md §5): calls go through router → audiences → webhook-delivery to
 * a real receiver, audiences are created through the admin API, and membership arrives as identify
 * calls. Real Redis under a unique prefix; the audiences service's clock is injected where time
 * windows matter.
 */
import { startTestAdmin, type TestAdmin } from '../../../test/support/admin';
import { eventually, type Receiver, startReceiver, sleep } from '@eventrelay/testkit';
import { startTestPipeline, trackCall, webhookDestination, type PipelineOptions, type TestPipeline } from '../../../test/support/pipeline';
import { testScope } from '../../../test/support/scope';

const DAY_MS = 86_400_000;

interface MembershipBody {
  type: string;
  userId: string;
  traits: Record<string, unknown>;
  timestamp: string;
  context?: { personas?: Record<string, unknown> };
}

/** The membership identifies a receiver got, in arrival order. */
function memberships(receiver: Receiver): MembershipBody[] {
  return receiver.requests
    .map((r) => JSON.parse(r.body.toString('utf8')) as MembershipBody)
    .filter((b) => b.type === 'identify' && b.context?.personas !== undefined);
}

function identify(messageId: string, userId: string, traits: Record<string, unknown>, at = new Date()) {
  const ts = at.toISOString();
  return { type: 'identify' as const, messageId, userId, traits, timestamp: ts, receivedAt: ts };
}

describe('audiences: membership delivered as identify calls', () => {
  const scope = testScope();

  /**
   * The pipeline with the audiences service, the admin API, and a receiver behind a destination
   * that is connected to no source: it gets membership calls only.
   */
  async function setup(label: string, options: PipelineOptions = {}): Promise<{ p: TestPipeline; admin: TestAdmin; receiver: Receiver }> {
    const receiver = scope.track(await startReceiver());
    const p = scope.track(
      await startTestPipeline({
        label,
        audiences: true,
        destinations: [webhookDestination('aud-hooks', [receiver.url], { sourceIds: [] })],
        ...options,
      }),
    );
    const admin = scope.track(await startTestAdmin({ prefix: p.prefix }));
    return { p, admin, receiver };
  }

  /**
   * An audience that sends nothing, so that the sources' calls feed profiles before the audience
   * under test exists (the router feeds profiles only for the sources some audience reads).
   */
  async function gather(p: TestPipeline, admin: TestAdmin, sourceIds = ['src-test']): Promise<void> {
    const res = await admin.call('POST', '/audiences', {
      id: 'gather',
      name: 'Gathering',
      sourceIds,
      destinationIds: [],
      condition: { trait: { key: 'plan', exists: true } },
    });
    expect(res.status).toBe(201);
    await p.router.refreshConfig();
  }

  async function profiles(p: TestPipeline): Promise<number> {
    return p.admin.zcard(`${p.prefix}:prof:index`);
  }

  async function createAudience(admin: TestAdmin, body: Record<string, unknown>): Promise<string> {
    const res = await admin.call('POST', '/audiences', { sourceIds: ['src-test'], destinationIds: ['aud-hooks'], ...body });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function ready(admin: TestAdmin, id: string): Promise<{ members: number; profilesScanned?: number }> {
    return eventually(async () => {
      const res = await admin.call('GET', `/audiences/${id}`);
      expect(res.body.membership.status).toBe('ready');
      return res.body.membership;
    }, 15_000);
  }

  it('a new audience sends one true per current member and none to others; later calls send only changes', async () => {
    const { p, admin, receiver } = await setup('aud-backfill');
    await gather(p, admin);
    const plans: Record<string, string> = { 'u-1': 'trial', 'u-2': 'pro', 'u-3': 'trial', 'u-4': 'free', 'u-5': 'trial' };
    await p.route(
      Object.entries(plans).map(([userId, plan], i) => identify(`seed-${i}`, userId, { plan, email: `${userId}@example.com` })),
    );
    // u-6 only ever sent an anonymous track: no profile, no membership.
    await p.route([trackCall('anon-1', { userId: undefined, anonymousId: 'a-6' })]);
    await eventually(async () => expect(await profiles(p)).toBe(5));

    const id = await createAudience(admin, { name: 'Trial Users', condition: { trait: { key: 'plan', equals: 'trial' } } });
    expect((await ready(admin, id)).members).toBe(3);
    await receiver.waitFor(3);
    await sleep(500); // nothing more may come
    const backfill = memberships(receiver);
    expect(backfill.map((b) => b.userId).sort()).toEqual(['u-1', 'u-3', 'u-5']);
    for (const b of backfill) {
      expect(b.traits).toEqual({ trial_users: true });
      expect(b.context?.personas).toEqual({ computation_class: 'audience', computation_id: id, computation_key: 'trial_users' });
    }

    // u-4 qualifies: one true. u-1 leaves: one false. u-3 stays a member (another trait changes): nothing.
    await p.route([
      identify('later-1', 'u-4', { plan: 'trial' }),
      identify('later-2', 'u-1', { plan: 'pro' }),
      identify('later-3', 'u-3', { email: 'new@example.com' }),
    ]);
    await receiver.waitFor(5);
    await sleep(500);
    const later = memberships(receiver).slice(3);
    expect(later.map((b) => [b.userId, b.traits['trial_users']]).sort()).toEqual([
      ['u-1', false],
      ['u-4', true],
    ]);
    expect((await admin.call('GET', `/audiences/${id}`)).body.membership.members).toBe(3);
  });

  it('merges traits across the audience’s sources only, and ignores calls of other sources', async () => {
    const { p, admin, receiver } = await setup('aud-sources');
    await p.store.apply({
      sources: [p.source, { id: 'src-other', name: 'Other', type: 'web', writeKey: `wk_other_${p.prefix.replace(/\W/g, '')}` }],
      destinations: [],
      audiences: [],
    });
    await gather(p, admin, ['src-test', 'src-other']);
    await p.route([identify('o-1', 'u-1', { plan: 'trial' })], 'other-1', 'src-other');
    await p.route([identify('t-1', 'u-2', { plan: 'trial' })]);
    await eventually(async () => expect(await profiles(p)).toBe(2));
    const id = await createAudience(admin, { name: 'Trial', condition: { trait: { key: 'plan', equals: 'trial' } } });
    expect((await ready(admin, id)).members).toBe(1);
    await receiver.waitFor(1);
    await sleep(300);
    expect(memberships(receiver).map((b) => b.userId)).toEqual(['u-2']);
  });

  it('an event withinDays audience drops a user once the window has passed (injected clock, periodic sync); unchanged users get nothing', async () => {
    let now = Date.parse('2026-11-21T12:00:00.000Z');
    const { p, admin, receiver } = await setup('aud-window', {
      audiencesClock: () => now,
      audiencesEnv: { AUDIENCES_SYNC_INTERVAL_MS: '200' },
    });
    await gather(p, admin);
    const at = (ms: number) => new Date(ms).toISOString();
    const order = (messageId: string, userId: string, ms: number) =>
      trackCall(messageId, { userId, event: 'Order Completed', timestamp: at(ms), receivedAt: at(ms) });
    // u-1 ordered today; u-2 ordered today and 5 days ago (twice in the window); u-3 ordered 30 days ago.
    await p.route([
      order('o-1', 'u-1', now),
      order('o-2', 'u-2', now),
      order('o-3', 'u-2', now - 5 * DAY_MS),
      order('o-4', 'u-3', now - 30 * DAY_MS),
    ]);
    await eventually(async () => expect(await profiles(p)).toBe(3));

    const id = await createAudience(admin, { name: 'Recent Buyers', condition: { event: { name: 'Order Completed', withinDays: 7 } } });
    expect((await ready(admin, id)).members).toBe(2);
    await receiver.waitFor(2);
    expect(
      memberships(receiver)
        .map((b) => [b.userId, b.traits['recent_buyers']])
        .sort(),
    ).toEqual([
      ['u-1', true],
      ['u-2', true],
    ]);

    // Several periodic syncs with nothing changed: nothing is sent.
    const syncedAt = async () => (await admin.call('GET', `/audiences/${id}`)).body.membership.lastFullSyncAt as string;
    const before = await syncedAt();
    now += 60_000;
    await eventually(async () => expect(await syncedAt()).not.toBe(before));
    await sleep(600);
    expect(memberships(receiver)).toHaveLength(2);

    // Three days later u-2's older order is 8 days old, but today's still counts: still a member.
    // Eight days later both are out of the window: one false each, and nothing for u-3.
    now += 3 * DAY_MS;
    await sleep(600);
    expect(memberships(receiver)).toHaveLength(2);
    now += 5 * DAY_MS;
    await receiver.waitFor(4);
    await sleep(600);
    const left = memberships(receiver).slice(2);
    expect(left.map((b) => [b.userId, b.traits['recent_buyers']]).sort()).toEqual([
      ['u-1', false],
      ['u-2', false],
    ]);
    expect(left.every((b) => b.timestamp === new Date(Date.parse(b.timestamp)).toISOString())).toBe(true);
    expect((await admin.call('GET', `/audiences/${id}`)).body.membership.members).toBe(0);
  });

  it('a profile not written for AUDIENCES_PROFILE_TTL_DAYS expires: it leaves the index and its audiences, nothing is sent; a call refreshes it', async () => {
    let now = Date.parse('2026-11-21T12:00:00.000Z');
    const { p, admin, receiver } = await setup('aud-ttl', {
      audiencesClock: () => now,
      audiencesEnv: { AUDIENCES_SYNC_INTERVAL_MS: '200', AUDIENCES_PROFILE_TTL_DAYS: '1' },
    });
    const key = (userId: string) => `${p.prefix}:prof:u:${userId}`;
    await gather(p, admin);
    await p.route([trackCall('t-1', { userId: 'u-1' }), trackCall('t-2', { userId: 'u-2' })]);
    await eventually(async () => expect(await profiles(p)).toBe(2));
    // Redis itself drops an idle profile: each write sets the hash's TTL to the idle time.
    const ttl = await p.admin.pttl(key('u-1'));
    expect(ttl).toBeGreaterThan(DAY_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(DAY_MS);

    const id = await createAudience(admin, { name: 'Seen', condition: { event: { name: 'Tested' } } });
    expect((await ready(admin, id)).members).toBe(2);
    await receiver.waitFor(2);

    // u-2 calls again after 12 hours; 13 hours later only u-1 has been idle for over a day.
    now += 12 * 3_600_000;
    await p.route([trackCall('t-3', { userId: 'u-2' })]);
    await eventually(async () => expect(await p.admin.hget(key('u-2'), 'v')).toBe('2'));
    now += 13 * 3_600_000;
    await eventually(async () => expect(await p.admin.zrange(`${p.prefix}:prof:index`, 0, -1)).toEqual(['u-2']));
    expect(await p.admin.exists(key('u-1'))).toBe(0);
    expect(await p.admin.exists(key('u-2'))).toBe(1);
    expect(await p.admin.smembers(`${p.prefix}:aud:${id}:members`)).toEqual(['u-2']);
    expect(await p.admin.zrange(`${p.prefix}:prof:seen`, 0, -1)).toEqual(['u-2']);
    await sleep(600);
    expect(memberships(receiver)).toHaveLength(2);
  });

  it('an audience whose destination is disabled changes membership but sends nothing; deleting it erases its membership', async () => {
    const { p, admin, receiver } = await setup('aud-disabled');
    await p.setDestinations([webhookDestination('aud-hooks', [receiver.url], { sourceIds: [], enabled: false })]);
    await gather(p, admin);
    await p.route([identify('s-1', 'u-1', { plan: 'trial' })]);
    await eventually(async () => expect(await profiles(p)).toBe(1));
    const id = await createAudience(admin, { name: 'Trial', condition: { trait: { key: 'plan', equals: 'trial' } } });
    expect((await ready(admin, id)).members).toBe(1);
    await sleep(300);
    expect(receiver.requests).toHaveLength(0);
    expect((await admin.call('DELETE', `/audiences/${id}`)).status).toBe(204);
    expect(await p.admin.exists(`${p.prefix}:aud:${id}:members`, `${p.prefix}:aud:${id}:state`)).toBe(0);
  });
});
