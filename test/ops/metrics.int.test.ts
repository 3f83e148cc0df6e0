/**
 * The metrics of docs/metrics.md as a running pipeline exports them: real intake requests, a real
 * router and delivery, real receivers (one answers 2xx, one 500), then each process's /metrics
 * is scraped and read series by series.
 */
import { eventually, type Receiver, startReceiver } from '@eventrelay/testkit';
import { post } from '../support/ingest';
import { startTestPipeline, webhookDestination, type TestPipeline } from '../support/pipeline';
import { scrape, total, type Sample } from '../support/prom-text';

describe('metrics of a running pipeline', () => {
  const opened: { close(): Promise<void> }[] = [];
  const track = <T extends { close(): Promise<void> }>(thing: T): T => (opened.push(thing), thing);
  let ok: Receiver;
  let failing: Receiver;
  let p: TestPipeline;
  let ingest: Sample[];
  let router: Sample[];
  let delivery: Sample[];

  beforeAll(async () => {
    ok = track(await startReceiver());
    failing = track(await startReceiver({ responder: () => ({ status: 500 }) }));
    p = track(
      await startTestPipeline({
        label: 'metrics',
        ingest: true,
        destinations: [webhookDestination('d-ok', [ok.url]), webhookDestination('d-bad', [failing.url])],
        // Retries far away: each call to d-bad makes exactly one attempt during the test.
        deliveryEnv: { DELIVERY_RETRY_BASE_MS: '600000' },
      }),
    );
    const base = { userId: 'u-1' };
    const batch = await post(
      p.ingestUrl,
      '/v1/batch',
      {
        batch: [
          { type: 'track', event: 'A', messageId: 'm-1', ...base },
          { type: 'track', event: 'B', messageId: 'm-2', ...base },
          { type: 'identify', messageId: 'm-3', ...base },
          { type: 'track', messageId: 'm-4', ...base },
          { type: 'bogus', messageId: 'm-5', ...base },
          { type: 'page', messageId: 'm-6', integrations: { All: false }, ...base },
        ],
      },
      { writeKey: p.writeKey },
    );
    expect(batch.status).toBe(200);
    expect(await post(p.ingestUrl, '/v1/track', { event: 'A', messageId: 'm-1', ...base }, { writeKey: p.writeKey })).toMatchObject({
      status: 200,
    });
    expect(await post(p.ingestUrl, '/v1/t', { event: 'C', ...base }, { writeKey: 'no-such-key' })).toMatchObject({ status: 401 });
    // m-1, m-2, m-3 reach both destinations; m-6 neither.
    await eventually(() => expect(ok.requests).toHaveLength(3));
    await eventually(() => expect(failing.requests).toHaveLength(3));
    await eventually(async () =>
      expect(
        total(await scrape(`http://127.0.0.1:${p.delivery!.port}`), 'eventrelay_delivery_messages_total', { result: 'retry_scheduled' }),
      ).toBe(3),
    );
    ingest = await scrape(p.ingestUrl);
    router = await scrape(`http://127.0.0.1:${p.router.port}`);
    delivery = await scrape(`http://127.0.0.1:${p.delivery!.port}`);
  }, 30_000);

  afterAll(async () => {
    for (const o of opened.reverse()) await o.close();
  });

  it('counts intake requests by route, status class and code', () => {
    expect(total(ingest, 'eventrelay_ingest_requests_total', { route: 'batch', status_class: '2xx', code: 'ok' })).toBe(1);
    expect(total(ingest, 'eventrelay_ingest_requests_total', { route: 'track', status_class: '2xx', code: 'ok' })).toBe(1);
    // The short form /v1/t counts as track.
    expect(total(ingest, 'eventrelay_ingest_requests_total', { route: 'track', status_class: '4xx', code: 'unknown_write_key' })).toBe(1);
    expect(total(ingest, 'eventrelay_ingest_request_duration_seconds_count', { route: 'batch' })).toBe(1);
  });

  it('counts calls by type, outcome and reason', () => {
    expect(total(ingest, 'eventrelay_ingest_calls_total', { type: 'track', outcome: 'accepted' })).toBe(2);
    expect(total(ingest, 'eventrelay_ingest_calls_total', { type: 'identify', outcome: 'accepted' })).toBe(1);
    expect(total(ingest, 'eventrelay_ingest_calls_total', { type: 'page', outcome: 'accepted' })).toBe(1);
    expect(total(ingest, 'eventrelay_ingest_calls_total', { type: 'track', outcome: 'duplicate' })).toBe(1);
    expect(total(ingest, 'eventrelay_ingest_calls_total', { type: 'track', outcome: 'rejected', reason: 'invalid_event' })).toBe(1);
    expect(total(ingest, 'eventrelay_ingest_calls_total', { type: 'unknown', outcome: 'rejected', reason: 'invalid_event' })).toBe(1);
    expect(total(ingest, 'eventrelay_ingest_calls_total', { type: 'track', outcome: 'rejected', reason: 'unknown_write_key' })).toBe(1);
    expect(total(ingest, 'eventrelay_ingest_calls_total')).toBe(8);
  });

  it('counts routed, unrouted and filtered calls and the fan-out', () => {
    expect(total(router, 'eventrelay_router_calls_total', { result: 'routed' })).toBe(3);
    expect(total(router, 'eventrelay_router_calls_total', { result: 'unrouted' })).toBe(1);
    expect(total(router, 'eventrelay_router_filtered_total', { reason: 'integrations' })).toBe(2);
    expect(total(router, 'eventrelay_router_deliveries_total')).toBe(6);
    expect(total(router, 'eventrelay_router_fanout_count')).toBe(4);
    expect(total(router, 'eventrelay_router_fanout_sum')).toBe(6);
    expect(total(router, 'eventrelay_router_fanout_bucket', { le: '0' })).toBe(1);
  });

  it('counts attempts and messages by destination, outcome and status class', () => {
    expect(total(delivery, 'eventrelay_delivery_attempts_total', { destination: 'd-ok', outcome: 'success', status_class: '2xx' })).toBe(3);
    expect(total(delivery, 'eventrelay_delivery_attempts_total', { destination: 'd-bad', outcome: 'retryable', status_class: '5xx' })).toBe(
      3,
    );
    expect(total(delivery, 'eventrelay_delivery_messages_total', { destination: 'd-ok', result: 'delivered' })).toBe(3);
    expect(total(delivery, 'eventrelay_delivery_messages_total', { destination: 'd-bad', result: 'retry_scheduled' })).toBe(3);
    expect(total(delivery, 'eventrelay_delivery_end_to_end_seconds_count')).toBe(3);
    expect(total(delivery, 'eventrelay_delivery_attempt_seconds_count')).toBe(6);
    // Nothing is being attempted once every call has had its attempt.
    expect(total(delivery, 'eventrelay_delivery_in_flight', { destination: 'd-ok' })).toBe(0);
    expect(delivery.some((s) => s.name === 'eventrelay_delivery_in_flight' && s.labels['destination'] === 'd-bad')).toBe(true);
  });

  it('reports each queue by state from every worker process, and the retries as delayed', () => {
    for (const samples of [router, delivery]) {
      for (const queue of ['route', 'deliver', 'profile', 'audience', 'regulation']) {
        expect(
          samples
            .filter((s) => s.name === 'eventrelay_queue_jobs' && s.labels['queue'] === queue)
            .map((s) => s.labels['state'])
            .sort(),
        ).toEqual(['active', 'delayed', 'failed', 'waiting']);
        expect(samples.some((s) => s.name === 'eventrelay_queue_oldest_waiting_seconds' && s.labels['queue'] === queue)).toBe(true);
      }
      // d-bad's three calls came in one request, so they wait for their retry in one job.
      expect(total(samples, 'eventrelay_queue_jobs', { queue: 'deliver', state: 'delayed' })).toBe(1);
      expect(total(samples, 'eventrelay_queue_jobs', { queue: 'deliver', state: 'waiting' })).toBe(0);
      expect(total(samples, 'eventrelay_queue_oldest_waiting_seconds', { queue: 'deliver' })).toBe(0);
    }
  });

  it('labels every series with its service and exports the standard Node process metrics', () => {
    for (const [samples, service] of [
      [ingest, 'ingest'],
      [router, 'router'],
      [delivery, 'webhook-delivery'],
    ] as const) {
      expect(samples.every((s) => s.labels['service'] === service)).toBe(true);
      for (const name of [
        'process_resident_memory_bytes',
        'process_cpu_seconds_total',
        'nodejs_eventloop_lag_p99_seconds',
        'nodejs_heap_size_used_bytes',
      ])
        expect(samples.some((s) => s.name === name)).toBe(true);
    }
  });
});
