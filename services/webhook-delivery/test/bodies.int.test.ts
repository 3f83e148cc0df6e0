/**
 * The golden webhook fixtures (packages/config/fixtures/webhooks) end to end: each call goes
 * through the real router and webhook-delivery to a real receiver, and what arrives on the wire
 * must be the fixture's body byte for byte, signed with the fixture's signature.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { type DeleteNotice, type NormalizedCall, verifySignature } from '@eventrelay/config';
import { eventually, type ReceivedRequest, type Receiver, startReceiver } from '@eventrelay/testkit';
import { startTestPipeline, trackCall, webhookDestination, type TestPipeline } from '../../../test/support/pipeline';

interface WebhookFixture {
  readonly file: string;
  readonly name: string;
  readonly sharedSecret: string;
  readonly call: NormalizedCall | DeleteNotice;
  readonly signature: string;
  readonly body: Buffer;
}

const FIXTURES_DIR = path.resolve(__dirname, '../../../packages/config/fixtures/webhooks');

function loadFixtures(): WebhookFixture[] {
  return readdirSync(FIXTURES_DIR)
    .filter((f) => f.endsWith('.call.json'))
    .sort()
    .map((f) => {
      const base = f.slice(0, -'.call.json'.length);
      const parsed = JSON.parse(readFileSync(path.join(FIXTURES_DIR, f), 'utf8')) as Omit<WebhookFixture, 'file' | 'body'>;
      return { ...parsed, file: base, body: readFileSync(path.join(FIXTURES_DIR, `${base}.body.json`)) };
    });
}

const fixtures = loadFixtures();

/** The request the receiver got for one message, once it arrived. */
function requestFor(receiver: Receiver, messageId: string): Promise<ReceivedRequest> {
  return eventually(() => {
    const found = receiver.requests.filter((r) => r.headers['x-eventrelay-message-id'] === messageId);
    expect(found).toHaveLength(1);
    return found[0]!;
  });
}

describe('webhook bodies and signatures match the golden fixtures', () => {
  let receiver: Receiver;
  let pipeline: TestPipeline;

  beforeAll(async () => {
    receiver = await startReceiver();
    pipeline = await startTestPipeline({ label: 'bodies' });
  });
  afterAll(async () => {
    await pipeline?.close();
    await receiver?.close();
  });

  it('has a body file for every call fixture, and covers every call type and delete', () => {
    const callFiles = readdirSync(FIXTURES_DIR).filter((f) => f.endsWith('.call.json'));
    const bodyFiles = readdirSync(FIXTURES_DIR).filter((f) => f.endsWith('.body.json'));
    expect(bodyFiles.sort()).toEqual(callFiles.map((f) => f.replace(/\.call\.json$/, '.body.json')).sort());
    expect(new Set(fixtures.map((f) => f.call.type))).toEqual(new Set(['identify', 'track', 'page', 'screen', 'group', 'alias', 'delete']));
  });

  it.each(fixtures.map((f) => [f.file, f] as const))('%s: body byte for byte, X-Signature as in the fixture', async (_file, fixture) => {
    const destinationId = `dest-${fixture.file}`;
    await pipeline.setDestinations([webhookDestination(destinationId, [receiver.url], { sharedSecret: fixture.sharedSecret })]);
    if (fixture.call.type === 'delete') {
      // The router never produces deletes (regulations do), so the job goes on the deliver queue directly.
      await pipeline.deliverQueue.add('deliver', { destinationId, calls: [{ sourceId: pipeline.source.id, call: fixture.call }] });
    } else {
      await pipeline.route([fixture.call]);
    }

    const req = await requestFor(receiver, fixture.call.messageId);
    expect(req.method).toBe('POST');
    if (!req.body.equals(fixture.body)) {
      // Buffer.equals gives no diff; show one.
      expect(req.body.toString('utf8')).toBe(fixture.body.toString('utf8'));
    }
    expect(req.body.equals(fixture.body)).toBe(true);
    expect(req.headers['content-length']).toBe(String(fixture.body.length));
    expect(req.headers['x-signature']).toBe(fixture.signature);
    expect(verifySignature(fixture.sharedSecret, req.body, req.headers['x-signature'])).toBe(true);
    // The signature is keyed: another secret does not verify it.
    expect(verifySignature(`${fixture.sharedSecret}-other`, req.body, req.headers['x-signature'])).toBe(false);

    const attempts = await eventually(async () => {
      const found = await pipeline.attempts(destinationId);
      expect(found).toHaveLength(1);
      return found;
    });
    expect(attempts[0]).toMatchObject({ messageId: fixture.call.messageId, outcome: 'success', status: 200, attempt: 1 });
  });

  it('sends no X-Signature when the destination has no sharedSecret', async () => {
    await pipeline.setDestinations([webhookDestination('dest-unsigned', [receiver.url])]);
    await pipeline.route([trackCall('m-unsigned')]);
    const req = await requestFor(receiver, 'm-unsigned');
    expect(req.headers['x-signature']).toBeUndefined();
    expect(JSON.parse(req.body.toString('utf8'))).toMatchObject({
      version: 1,
      type: 'track',
      userId: 'user-1',
      event: 'Tested',
      properties: { n: 1 },
    });
  });
});
