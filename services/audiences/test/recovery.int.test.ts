/**
 * What the audiences service does after failures: a membership change committed but never queued
 * (a crash between the two steps) is queued by the periodic sync, once; a call applied twice (a
 * retried job) is counted once. Real Redis, a real receiver.
 */
import { startTestAdmin } from '../../../test/support/admin';
import { eventually, startReceiver, sleep } from '@eventrelay/testkit';
import { startTestPipeline, trackCall, webhookDestination } from '../../../test/support/pipeline';
import { testScope } from '../../../test/support/scope';

describe('audiences: recovery', () => {
  const scope = testScope();

  it('a change left in the outbox by a crash is queued by the periodic sync, once', async () => {
    let now = Date.now();
    const receiver = scope.track(await startReceiver());
    const p = scope.track(
      await startTestPipeline({
        label: 'aud-outbox',
        audiences: true,
        audiencesClock: () => now,
        audiencesEnv: { AUDIENCES_SYNC_INTERVAL_MS: '200' },
        destinations: [webhookDestination('aud-hooks', [receiver.url], { sourceIds: [] })],
      }),
    );
    const admin = scope.track(await startTestAdmin({ prefix: p.prefix }));
    expect(
      (
        await admin.call('POST', '/audiences', {
          id: 'vip',
          name: 'VIP',
          sourceIds: ['src-test'],
          destinationIds: ['aud-hooks'],
          condition: { trait: { key: 'vip', equals: true } },
        })
      ).status,
    ).toBe(201);
    await eventually(async () => expect((await admin.call('GET', '/audiences/vip')).body.membership.status).toBe('ready'));
    // As a crash after the commit would leave it: member recorded, its call never queued.
    await p.admin.sadd(`${p.prefix}:aud:vip:members`, 'u-crash');
    await p.admin.hset(`${p.prefix}:aud:vip:outbox`, 'u-crash', `1 t-crash ${now}`);
    await sleep(600);
    expect(receiver.requests).toHaveLength(0); // younger than a minute: maybe still in flight
    now += 61_000;
    await receiver.waitFor(1);
    await sleep(600);
    expect(receiver.requests).toHaveLength(1);
    const body = JSON.parse(receiver.requests[0]!.body.toString('utf8')) as { userId: string; traits: Record<string, unknown> };
    expect(body).toMatchObject({ type: 'identify', userId: 'u-crash', traits: { vip: true } });
    expect(receiver.requests[0]!.headers['x-eventrelay-message-id']).toBe('aud-t-crash');
    expect(await p.admin.hlen(`${p.prefix}:aud:vip:outbox`)).toBe(0);
  });

  it('a call applied twice (a retried job) counts once', async () => {
    const receiver = scope.track(await startReceiver());
    const p = scope.track(
      await startTestPipeline({
        label: 'aud-repeat',
        audiences: true,
        destinations: [webhookDestination('aud-hooks', [receiver.url], { sourceIds: [] })],
      }),
    );
    const admin = scope.track(await startTestAdmin({ prefix: p.prefix }));
    expect(
      (
        await admin.call('POST', '/audiences', {
          id: 'twice',
          name: 'Bought Twice',
          sourceIds: ['src-test'],
          destinationIds: ['aud-hooks'],
          condition: { event: { name: 'Bought', atLeast: 2 } },
        })
      ).status,
    ).toBe(201);
    await eventually(async () => expect((await admin.call('GET', '/audiences/twice')).body.membership.status).toBe('ready'));
    const bought = trackCall('bought-1', { userId: 'u-1', event: 'Bought' });
    // The same call in two route jobs, as a retried route job after a crash would give.
    await p.route([bought], 'req-a');
    await p.route([bought], 'req-b');
    await eventually(async () => expect(await p.admin.hget(`${p.prefix}:prof:u:u-1`, 'e:src-test:Bought')).toMatch(/^1 /));
    await sleep(500);
    expect(await p.admin.hget(`${p.prefix}:prof:u:u-1`, 'e:src-test:Bought')).toMatch(/^1 \d+:1$/);
    expect(receiver.requests).toHaveLength(0);
    // A second, different purchase makes the user a member.
    await p.route([trackCall('bought-2', { userId: 'u-1', event: 'Bought' })]);
    await receiver.waitFor(1);
    expect(JSON.parse(receiver.requests[0]!.body.toString('utf8'))).toMatchObject({ userId: 'u-1', traits: { bought_twice: true } });
  });
});
