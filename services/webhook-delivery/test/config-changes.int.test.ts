/**
 * Destinations change under a running pipeline: webhook-delivery must not judge a job on a config
 * view older than the router's, and a disabled destination's messages are kept for replay.
 */
import { eventually, startReceiver } from '@eventrelay/testkit';
import { startTestPipeline, trackCall, webhookDestination } from '../../../test/support/pipeline';
import { testScope } from '../../../test/support/scope';

describe('destination changes while running', () => {
  const scope = testScope();

  it('a destination the router already knows but webhook-delivery not yet is delivered to, not dropped', async () => {
    const receiver = scope.track(await startReceiver());
    const p = scope.track(await startTestPipeline({ label: 'cfg-new' }));
    const dest = webhookDestination('dest-new', [receiver.url]);
    await p.store.apply({ sources: [p.source], destinations: [dest], audiences: [] });
    // Only the router reloads now; webhook-delivery's own poll would take up to a second.
    await p.router.refreshConfig();
    await p.route([trackCall('m-new-1')]);
    const [req] = await receiver.waitFor(1, 5000);
    expect(req!.headers['x-eventrelay-message-id']).toBe('m-new-1');
  });

  it("a disabled destination's pending message is dead-lettered for replay, not sent", async () => {
    const receiver = scope.track(await startReceiver({ responder: () => ({ status: 500 }) }));
    const dest = webhookDestination('dest-off', [receiver.url]);
    const p = scope.track(
      await startTestPipeline({
        label: 'cfg-off',
        destinations: [dest],
        random: () => 0.999,
        deliveryEnv: { DELIVERY_RETRY_BASE_MS: '1000' },
      }),
    );
    await p.route([trackCall('m-off-1')]);
    await receiver.waitFor(1);
    // The first attempt failed and a retry is scheduled; now the destination is disabled.
    await p.setDestinations([{ ...dest, enabled: false }]);
    const letter = await eventually(async () => {
      const letters = await p.deadLetters('dest-off');
      expect(letters).toHaveLength(1);
      return letters[0]!;
    }, 10_000);
    expect(letter.lastError).toBe('destination is disabled');
    expect(letter.job.call.messageId).toBe('m-off-1');
    expect(letter.job).not.toHaveProperty('retry');
    expect(receiver.requests).toHaveLength(1);
  });
});
