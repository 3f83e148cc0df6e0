/**
 * What profiles may cost Redis (docs/audiences.md, "Profiles"): at most
 * AUDIENCES_MAX_PROFILES_PER_SOURCE per source, and keys that do not grow with a long userId.
 * Router, audiences service and admin API started through their real start functions, real Redis
 * under a unique prefix; the audiences service's clock is injected where idle expiry matters.
 */
import { createHash } from 'node:crypto';
import type { Regulation } from '@eventrelay/config';
import { eventually } from '@eventrelay/testkit';
import { startTestAdmin, type TestAdmin } from '../../../test/support/admin';
import { startTestPipeline, trackCall, type PipelineOptions, type TestPipeline } from '../../../test/support/pipeline';
import { scrape, total } from '../../../test/support/prom-text';
import { testScope } from '../../../test/support/scope';

const OTHER = 'src-other';
const DAY_MS = 86_400_000;

function identify(messageId: string, userId: string, traits: Record<string, unknown>) {
  const ts = new Date().toISOString();
  return { type: 'identify' as const, messageId, userId, traits, timestamp: ts, receivedAt: ts };
}

describe('audiences: what profiles may cost', () => {
  const scope = testScope();

  /** The pipeline with the audiences service and an audience over src-test and src-other (so both feed profiles). */
  async function setup(label: string, options: PipelineOptions = {}): Promise<{ p: TestPipeline; admin: TestAdmin }> {
    const p = scope.track(await startTestPipeline({ label, audiences: true, delivery: false, ...options }));
    await p.store.apply({
      sources: [p.source, { id: OTHER, name: 'Other', type: 'web', writeKey: `wk_other_${p.prefix.replace(/\W/g, '')}` }],
      destinations: [],
      audiences: [
        {
          id: 'trial',
          name: 'Trial',
          sourceIds: [p.source.id, OTHER],
          destinationIds: [],
          condition: { trait: { key: 'plan', equals: 'trial' } },
        },
      ],
    });
    await p.router.refreshConfig();
    await p.audiences!.refreshConfig();
    const admin = scope.track(await startTestAdmin({ prefix: p.prefix }));
    return { p, admin };
  }

  const indexed = async (p: TestPipeline) => (await p.admin.zrange(`${p.prefix}:prof:index`, 0, -1)).sort();
  const skipped = async (p: TestPipeline, source: string) =>
    total(await scrape(`http://127.0.0.1:${p.audiences!.port}`), 'eventrelay_audiences_profile_skipped_total', { source });

  describe('the per-source cap (AUDIENCES_MAX_PROFILES_PER_SOURCE)', () => {
    it('past the cap, a source still updates the profiles it holds, starts none, and counts the calls it skipped', async () => {
      const { p } = await setup('cap-holds', { audiencesEnv: { AUDIENCES_MAX_PROFILES_PER_SOURCE: '3' } });
      await p.route(['u-1', 'u-2', 'u-3'].map((u, i) => identify(`seed-${i}`, u, { plan: 'free' })));
      await eventually(async () => expect(await indexed(p)).toEqual(['u-1', 'u-2', 'u-3']));
      expect(await skipped(p, p.source.id)).toBe(0);

      // src-test is at 3: u-1's update is applied; u-4 (two calls) and u-5 start nothing.
      await p.route([
        identify('new-4a', 'u-4', { plan: 'trial' }),
        identify('upd-1', 'u-1', { plan: 'trial' }),
        trackCall('new-4b', { userId: 'u-4' }),
        identify('new-5', 'u-5', { plan: 'trial' }),
      ]);
      await eventually(async () => expect(await skipped(p, p.source.id)).toBe(3));
      await eventually(async () => expect(await p.admin.hget(`${p.prefix}:prof:u:u-1`, 't:src-test:plan')).toBe('"trial"'));
      expect(await indexed(p)).toEqual(['u-1', 'u-2', 'u-3']);
      expect(await p.admin.exists(`${p.prefix}:prof:u:u-4`, `${p.prefix}:prof:u:u-5`)).toBe(0);
      expect(await p.admin.smembers(`${p.prefix}:aud:trial:members`)).toEqual(['u-1']);
      expect(await p.admin.zcard(`${p.prefix}:prof:src:src-test`)).toBe(3);

      // The cap is per source: src-other holds none yet, so u-4 starts a profile there; src-test
      // still holds no part of it, so u-4's next src-test call is skipped too.
      await p.route([identify('o-4', 'u-4', { plan: 'trial' })], 'other-1', OTHER);
      await eventually(async () => expect(await p.admin.hget(`${p.prefix}:prof:u:u-4`, `t:${OTHER}:plan`)).toBe('"trial"'));
      await p.route([trackCall('new-4c', { userId: 'u-4' })]);
      await eventually(async () => expect(await skipped(p, p.source.id)).toBe(4));
      expect(await p.admin.hget(`${p.prefix}:prof:u:u-4`, 'e:src-test:Tested')).toBeNull();
      expect(await skipped(p, OTHER)).toBe(0);
    });

    it('a profile the source has not written for the idle TTL, or one erased by a regulation, frees its room', async () => {
      let now = Date.parse('2026-11-21T12:00:00.000Z');
      const { p, admin } = await setup('cap-frees', {
        audiencesClock: () => now,
        audiencesEnv: { AUDIENCES_MAX_PROFILES_PER_SOURCE: '2', AUDIENCES_PROFILE_TTL_DAYS: '1', AUDIENCES_SYNC_INTERVAL_MS: '200' },
      });
      await p.route([identify('a', 'u-idle', { plan: 'trial' }), identify('b', 'u-gone', { plan: 'trial' })]);
      await eventually(async () => expect(await indexed(p)).toEqual(['u-gone', 'u-idle']));
      await p.route([identify('c', 'u-new', { plan: 'trial' })]);
      await eventually(async () => expect(await skipped(p, p.source.id)).toBe(1));

      // A DELETE regulation erases u-gone's profile: its room is free for u-new.
      const created = await admin.call('POST', '/regulations', {
        regulationType: 'DELETE',
        subjectType: 'USER_ID',
        subjectIds: ['u-gone'],
      });
      expect(created.status).toBe(202);
      await eventually(async () =>
        expect((await admin.call<Regulation>('GET', `/regulations/${created.body.id as string}`)).body.status).toBe('finished'),
      );
      expect(await p.admin.zrange(`${p.prefix}:prof:src:src-test`, 0, -1)).toEqual(['u:u-idle']);
      await p.route([identify('d', 'u-new', { plan: 'trial' })]);
      await eventually(async () => expect(await indexed(p)).toEqual(['u-idle', 'u-new']));

      // Half a day later u-new writes again; a day after its first write, u-idle (not written
      // since) leaves the count with its profile, and u-late gets in.
      now += DAY_MS / 2;
      await p.route([identify('e', 'u-new', { plan: 'pro' })]);
      await eventually(async () => expect(await p.admin.hget(`${p.prefix}:prof:u:u-new`, 't:src-test:plan')).toBe('"pro"'));
      now += DAY_MS / 2 + 60_000;
      await eventually(async () => expect(await p.admin.zrange(`${p.prefix}:prof:src:src-test`, 0, -1)).toEqual(['u:u-new']));
      await p.route([identify('f', 'u-late', { plan: 'trial' })]);
      await eventually(async () => expect(await indexed(p)).toEqual(['u-late', 'u-new']));
      expect(await skipped(p, p.source.id)).toBe(1);
    });
  });

  describe('profile keys', () => {
    const digest = (id: string) => createHash('sha256').update(id).digest('base64url');

    it('a 512-character userId gets a key of bounded length, and is evaluated and erased by its id', async () => {
      const { p, admin } = await setup('keys-long');
      const long = `user-${'x'.repeat(507)}`;
      const key = `${p.prefix}:prof:h:${digest(long)}`;
      await p.route([identify('l-1', long, { plan: 'trial' }), identify('s-1', 'short', { plan: 'trial' })]);
      await eventually(async () => expect((await p.admin.smembers(`${p.prefix}:aud:trial:members`)).sort()).toEqual(['short', long]));
      expect(await p.admin.hget(key, 't:src-test:plan')).toBe('"trial"');
      expect(await p.admin.exists(`${p.prefix}:prof:u:${long}`)).toBe(0);
      // A short id keeps the key it always had.
      expect(await p.admin.hget(`${p.prefix}:prof:u:short`, 't:src-test:plan')).toBe('"trial"');

      const created = await admin.call('POST', '/regulations', { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: [long] });
      expect(created.status).toBe(202);
      await eventually(async () =>
        expect((await admin.call<Regulation>('GET', `/regulations/${created.body.id as string}`)).body.counts.profilesErased).toBe(1),
      );
      expect(await p.admin.exists(key)).toBe(0);
      expect(await indexed(p)).toEqual(['short']);
    });

    it('the profile of a long userId kept under its former key moves to the bounded key at its next call', async () => {
      const { p } = await setup('keys-former');
      const long = 'y'.repeat(200);
      // As an earlier version wrote it: keyed by the id itself.
      await p.admin.hset(`${p.prefix}:prof:u:${long}`, {
        v: '1',
        ids: 'aaaaaaaaaaaa',
        'ta:src-test': '1',
        't:src-test:plan': '"trial"',
        'tb:src-test': '18',
      });
      await p.admin.zadd(`${p.prefix}:prof:index`, 0, long);
      await p.route([identify('n-1', long, { email: 'y@example.com' })]);
      await eventually(async () => expect(await p.admin.smembers(`${p.prefix}:aud:trial:members`)).toEqual([long]));
      expect(await p.admin.exists(`${p.prefix}:prof:u:${long}`)).toBe(0);
      expect(await p.admin.hgetall(`${p.prefix}:prof:h:${digest(long)}`)).toMatchObject({
        v: '2',
        't:src-test:plan': '"trial"',
        't:src-test:email': '"y@example.com"',
      });
    });
  });
});
