/**
 * What profiles may cost Redis (docs/audiences.md, "Profiles"): keys that do not grow with a long
 * userId. Router, audiences service and admin API started through their real start functions,
 * real Redis under a unique prefix.
 */
import { createHash } from 'node:crypto';
import type { Regulation } from '@eventrelay/config';
import { eventually } from '@eventrelay/testkit';
import { startTestAdmin, type TestAdmin } from '../../../test/support/admin';
import { startTestPipeline, type PipelineOptions, type TestPipeline } from '../../../test/support/pipeline';
import { testScope } from '../../../test/support/scope';

const OTHER = 'src-other';

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
