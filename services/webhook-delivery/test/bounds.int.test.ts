/**
 * What webhook-delivery keeps per destination is bounded: past DELIVERY_DEAD_LETTER_MAX_PER_DESTINATION
 * the oldest dead letters are evicted, counted per destination, and the episode is audited once.
 */
import { AuditLog } from '@eventrelay/stores';
import { eventually, startReceiver } from '@eventrelay/testkit';
import { testScope } from '../../../test/support/scope';
import { startTestPipeline, trackCall, webhookDestination } from '../../../test/support/pipeline';

describe('delivery bounds', () => {
  const scope = testScope();

  it('dead letters past the cap evict the oldest: counted per destination, one audit entry per episode', async () => {
    const refusing = scope.track(await startReceiver({ responder: () => ({ status: 400 }) }));
    const p = scope.track(
      await startTestPipeline({
        label: 'bounds-dead',
        destinations: [webhookDestination('dest-full', [refusing.url]), webhookDestination('dest-other', [refusing.url])],
        deliveryEnv: { DELIVERY_DEAD_LETTER_MAX_PER_DESTINATION: '3' },
      }),
    );
    await p.route([1, 2, 3, 4, 5].map((n) => trackCall(`m-a${n}`)));
    await eventually(async () => expect(await p.deadLetters('dest-full')).toHaveLength(3));
    await eventually(async () => expect(await p.deadLetters('dest-other')).toHaveLength(3));
    // A later job of the same episode: more evictions, no second audit entry.
    await p.route([6, 7].map((n) => trackCall(`m-b${n}`)));
    await eventually(async () => {
      const evicted = (await p.deliveryRegistry.getSingleMetric('eventrelay_delivery_dead_letters_evicted_total')!.get()).values;
      expect(evicted.filter((v) => v.labels.destination === 'dest-full').map((v) => v.value)).toEqual([4]);
      expect(evicted.filter((v) => v.labels.destination === 'dest-other').map((v) => v.value)).toEqual([4]);
    });
    const ids = (await p.deadLetters('dest-full')).map((l) => l.job.call.messageId);
    expect(ids).toHaveLength(3);
    expect(ids).toEqual(expect.arrayContaining(['m-b6', 'm-b7']));

    const audit = (await new AuditLog(p.admin, p.prefix).page({ limit: 10 })).items;
    expect(audit.map((e) => [e.action, e.targetId, e.tokenId]).sort()).toEqual([
      ['destination.dead_letters_evicted', 'dest-full', 'webhook-delivery'],
      ['destination.dead_letters_evicted', 'dest-other', 'webhook-delivery'],
    ]);
    expect(audit[0]!.details).toMatchObject({ reason: 'dead letter cap reached', max: 3 });
  });
});
