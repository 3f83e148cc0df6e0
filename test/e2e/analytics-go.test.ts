/**
 * The Go client (packages/analytics-go) against the real ingest on real Redis: every call type,
 * sent by a Go program built from this repository, is found on the router's queue with the right
 * fields. Needs `go` on PATH (.ci/run installs it); without it the test fails saying so.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestIngest, type TestIngest } from '../support/ingest';

const run = promisify(execFile);
const MODULE = path.resolve(__dirname, '../../packages/analytics-go');
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('analytics-go → ingest', () => {
  let ingest: TestIngest;
  beforeAll(async () => {
    ingest = await startTestIngest({ label: 'go' });
  });
  afterAll(() => ingest.close());

  it('queues every call type with its fields', async () => {
    try {
      await run('go', ['run', './internal/e2esend'], {
        cwd: MODULE,
        env: { ...process.env, ENDPOINT: ingest.url, WRITE_KEY: ingest.writeKey },
        timeout: 120_000,
      });
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      throw new Error(
        e.code === 'ENOENT'
          ? 'go is not installed: apt-get install -y golang-go (or run .ci/run)'
          : `the Go sender failed: ${e.stderr ?? e.message}`,
        { cause: err },
      );
    }
    const calls = (await ingest.routeJobs()).flatMap((j) => j.calls);
    const byId = new Map(calls.map((c) => [c.messageId, c]));
    // go-largest: the biggest call the client accepts (32 KB as the intake measures it) is
    // accepted by the intake too.
    expect([...byId.keys()].sort()).toEqual([
      'go-alias',
      'go-group',
      'go-historical',
      'go-identify',
      'go-largest',
      'go-page',
      'go-screen',
      'go-track',
    ]);
    const largest = byId.get('go-largest')!;
    expect((largest.properties as { pad: string }).pad.length).toBeGreaterThan(32_000);

    expect(byId.get('go-identify')).toMatchObject({ type: 'identify', userId: 'go-user', traits: { plan: 'pro', seats: 3 } });
    expect(byId.get('go-track')).toMatchObject({
      type: 'track',
      userId: 'go-user',
      event: 'Order Completed',
      properties: { revenue: 19.99 },
      integrations: { All: false, Webhooks: true },
    });
    expect(byId.get('go-page')).toMatchObject({
      type: 'page',
      userId: 'go-user',
      name: 'Pricing',
      category: 'Marketing',
      properties: { url: 'https://acme.test/pricing', title: 'Pricing' },
    });
    expect(byId.get('go-screen')).toMatchObject({ type: 'screen', anonymousId: 'go-anon', name: 'Checkout', properties: { step: 2 } });
    expect(byId.get('go-group')).toMatchObject({ type: 'group', userId: 'go-user', groupId: 'go-org', traits: { name: 'Acme' } });
    expect(byId.get('go-alias')).toMatchObject({ type: 'alias', userId: 'go-user', previousId: 'go-anon' });
    expect(byId.get('go-historical')).toMatchObject({
      type: 'track',
      anonymousId: 'go-anon',
      originalTimestamp: '2026-01-02T03:04:05.678Z',
    });
    for (const call of calls) {
      expect(call.context).toMatchObject({ library: { name: 'analytics-go', version: expect.stringMatching(/^2\./) } });
      expect(call.timestamp).toMatch(ISO_MS);
      expect(call.sentAt).toMatch(ISO_MS);
    }
  }, 150_000);
});
