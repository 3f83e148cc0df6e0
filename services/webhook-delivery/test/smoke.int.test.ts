import { verifySignature } from '@eventrelay/config';
import { eventually, type Receiver, startReceiver } from '@eventrelay/testkit';
import { startTestPipeline, trackCall, webhookDestination, type TestPipeline } from '../../../test/support/pipeline';

describe('route job → router → webhook-delivery → receiver', () => {
  let receiver: Receiver;
  let pipeline: TestPipeline;

  beforeAll(async () => {
    receiver = await startReceiver();
    pipeline = await startTestPipeline({
      label: 'smoke',
      destinations: [webhookDestination('dest-1', [receiver.url], { sharedSecret: 'shh' })],
    });
  });
  afterAll(async () => {
    await pipeline.close();
    await receiver.close();
  });

  it('delivers a routed call once, signed', async () => {
    await pipeline.route([trackCall('m-1')]);
    const [req] = await receiver.waitFor(1);
    expect(req!.headers['x-eventrelay-message-id']).toBe('m-1');
    expect(req!.headers['user-agent']).toBe('Eventrelay/1.0');
    expect(verifySignature('shh', req!.body, req!.headers['x-signature'])).toBe(true);
    const attempts = await eventually(async () => {
      const found = await pipeline.attempts('dest-1');
      expect(found).toHaveLength(1);
      return found;
    });
    expect(attempts[0]).toMatchObject({ messageId: 'm-1', outcome: 'success', status: 200, attempt: 1 });
  });
});
