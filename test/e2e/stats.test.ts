/**
 * The stats through the whole pipeline: calls sent to the intake are counted per source (accepted,
 * rejected), their deliveries per destination (delivered with their lag, retrying, dead-lettered,
 * attempts),
 * and GET /admin/v1/stats reports them.
 */
import { eventually, startReceiver, type Receiver } from '@eventrelay/testkit';
import { startTestAdmin, type TestAdmin } from '../support/admin';
import { startTestPipeline, webhookDestination, type TestPipeline } from '../support/pipeline';

describe('ingest → router → webhook-delivery → GET /admin/v1/stats', () => {
  let accepting: Receiver;
  let refusing: Receiver;
  let flaky: Receiver;
  let pipeline: TestPipeline;
  let admin: TestAdmin;

  beforeAll(async () => {
    accepting = await startReceiver();
    // 400 is permanent: each call is dead-lettered after its one attempt.
    refusing = await startReceiver({ responder: () => ({ status: 400 }) });
    // 503 is retryable: the first round of the three calls fails, the next delivers them.
    flaky = await startReceiver({ responder: (_req, index) => ({ status: index < 3 ? 503 : 200 }) });
    pipeline = await startTestPipeline({
      label: 'stats-e2e',
      ingest: true,
      deliveryEnv: { DELIVERY_RETRY_BASE_MS: '50' },
      destinations: [
        webhookDestination('dst-ok', [accepting.url]),
        webhookDestination('dst-refused', [refusing.url]),
        webhookDestination('dst-flaky', [flaky.url]),
      ],
    });
    admin = await startTestAdmin({ prefix: pipeline.prefix });
  });
  afterAll(async () => {
    await admin?.close();
    await pipeline?.close();
    await accepting?.close();
    await refusing?.close();
    await flaky?.close();
  });

  it('reports the calls accepted and rejected, delivered, retried and dead-lettered', async () => {
    const batch = [
      { type: 'track', userId: 'u1', event: 'One' },
      { type: 'track', userId: 'u2', event: 'Two' },
      { type: 'identify', userId: 'u3', traits: { plan: 'pro' } },
      { type: 'track', userId: 'u4' }, // no event: rejected
    ];
    const res = await fetch(`${pipeline.ingestUrl}/v1/batch`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${pipeline.writeKey}:`).toString('base64')}`,
      },
      body: JSON.stringify({ batch }),
    });
    expect(res.status).toBe(200);
    await accepting.waitFor(3);
    await refusing.waitFor(3);
    await flaky.waitFor(6);

    // The services write their counts once a second.
    const report = await eventually(async () => {
      const answer = await admin.call('GET', '/stats');
      expect(answer.status).toBe(200);
      const [flakyStats, ok, refused] = answer.body.destinations;
      expect(flakyStats.totals).toMatchObject({
        delivered: 3,
        retrying: 3,
        deadLettered: 0,
        attempts: 6,
        failedAttempts: 3,
        errorRatio: 0.5,
      });
      expect(ok.totals).toMatchObject({ delivered: 3, deadLettered: 0, attempts: 3, failedAttempts: 0, errorRatio: 0 });
      expect(refused.totals).toMatchObject({ delivered: 0, deadLettered: 3, attempts: 3, failedAttempts: 3, errorRatio: 1 });
      expect(answer.body.sources[0].totals).toMatchObject({ accepted: 3, rejected: 1 });
      return answer.body;
    });
    expect(report.destinations.map((d: { id: string }) => d.id)).toEqual(['dst-flaky', 'dst-ok', 'dst-refused']);
    const ok = report.destinations[1];
    expect(ok.totals.lagMsAvg).toEqual(expect.any(Number));
    expect(ok.totals.lagMsMax).toBeGreaterThanOrEqual(ok.totals.lagMsAvg);
    expect(report.destinations[2].totals.lagMsAvg).toBeNull();
    // Everything happened within the last minute or two: in the last buckets, nowhere else.
    expect(ok.series.delivered.slice(-2).reduce((a: number, b: number) => a + b, 0)).toBe(3);
    expect(report.sources[0]).toMatchObject({ id: 'src-test', name: 'Test source' });
    expect(report.sources[0].totals.callsPerMinute).toBeCloseTo(4 / 60, 3);

    const day = await admin.call('GET', '/stats?window=day');
    expect(day.body.destinations[1].totals.delivered).toBe(3);
    expect(day.body.sources[0].totals.accepted).toBe(3);
  });
});
