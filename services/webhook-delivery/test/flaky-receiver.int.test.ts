/**
 * A flaky receiver is served, not starved (issue 31): 200 calls/s against a receiver that answers
 * 10% of requests 500 and 2% 429 with Retry-After: 1, at random. Each error delays its own call
 * only: every call arrives, no job is parked, the breaker stays closed, no rate is set, and the
 * webhook-delivery process spends about what it spends on a healthy receiver per request sent.
 *
 * webhook-delivery runs as a process of its own, so that its CPU is its own; the healthy run in
 * the same test is the baseline. Nothing here is timed against the wall clock: how long the
 * flaky run's last call took after the load is printed, and the bench's flaky and noisy-errors
 * scenarios hold the timing targets.
 */
import { buildServices, eventually, startReceiver, startService, type ServiceProcess } from '@eventrelay/testkit';
import { testScope } from '../../../test/support/scope';
import { startTestPipeline, trackCall, webhookDestination } from '../../../test/support/pipeline';
import { seededRandom } from '../../../test/support/seeded-random';

const RATE_PER_S = 200;
const SECONDS = 8;
const PER_BATCH = 20;

/** A metric's value summed over its series in a /metrics text (0 when absent). */
function metric(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest.startsWith(' ') || rest.startsWith('{')) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function metricsOf(child: ServiceProcess): Promise<string> {
  const res = await fetch(`${child.url}/metrics`);
  return res.text();
}

interface RunFigures {
  readonly requests: number;
  readonly cpuSeconds: number;
  readonly metrics: string;
  readonly tailMs: number;
}

describe('a flaky receiver', () => {
  const scope = testScope();
  beforeAll(() => buildServices('webhook-delivery'));

  /** Routes RATE_PER_S calls a second for SECONDS into a separate webhook-delivery; waits until every one arrived. */
  async function run(label: string, answer: () => { status: number; headers?: Record<string, string> }): Promise<RunFigures> {
    const delivered = new Set<string>();
    let requests = 0;
    const r = scope.track(
      await startReceiver({
        keep: false,
        responder: answer,
        onAnswered: (req, status) => {
          requests++;
          if (status >= 200 && status < 300) delivered.add(String(req.headers['x-eventrelay-message-id']));
        },
      }),
    );
    const p = scope.track(
      await startTestPipeline({ label, delivery: false, destinations: [webhookDestination(`dest-${label}`, [r.url])] }),
    );
    const child = await startService('webhook-delivery', {
      REDIS_URL: p.redisUrl,
      EVENTRELAY_PREFIX: p.prefix,
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      LOG_LEVEL: 'warn',
    });
    try {
      const cpuBefore = metric(await metricsOf(child), 'process_cpu_seconds_total');
      const ids: string[] = [];
      const started = Date.now();
      // Open loop: each batch goes at its time, whatever delivery is doing.
      for (let k = 0; k < (RATE_PER_S * SECONDS) / PER_BATCH; k++) {
        const wait = started + (k * PER_BATCH * 1000) / RATE_PER_S - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const batch = Array.from({ length: PER_BATCH }, (_, i) => `${label}-${k}-${i}`);
        ids.push(...batch);
        await p.route(batch.map((id) => trackCall(id)));
      }
      const loadEnded = Date.now();
      await eventually(() => expect(delivered.size).toBe(ids.length), 120_000, 50);
      const tailMs = Date.now() - loadEnded;
      const metrics = await metricsOf(child);
      expect([...delivered].sort()).toEqual([...ids].sort());
      expect(await p.deadLetters(`dest-${label}`)).toEqual([]);
      return { requests, cpuSeconds: metric(metrics, 'process_cpu_seconds_total') - cpuBefore, metrics, tailMs };
    } finally {
      await child.stop();
    }
  }

  it('gets every call at the offered rate, with no park, no breaker and no rate, for about the CPU per request of a healthy one', async () => {
    const healthy = await run('healthy', () => ({ status: 200 }));
    const random = seededRandom(31);
    const flaky = await run('flaky', () => {
      const r = random();
      if (r < 0.1) return { status: 500 };
      if (r < 0.12) return { status: 429, headers: { 'retry-after': '1' } };
      return { status: 200 };
    });
    const perRequest = (f: RunFigures) => (f.cpuSeconds * 1e6) / f.requests;
    console.log(
      `flaky receiver: ${flaky.requests} requests for ${RATE_PER_S * SECONDS} calls (healthy ${healthy.requests}); ` +
        `webhook-delivery CPU ${perRequest(flaky).toFixed(0)} µs per request sent vs ${perRequest(healthy).toFixed(0)} µs healthy; ` +
        `the last call arrived ${flaky.tailMs} ms after the load (healthy ${healthy.tailMs} ms)`,
    );
    // About one retry per eight calls: the errors cost their own retries and nothing more.
    expect(flaky.requests).toBeGreaterThan(RATE_PER_S * SECONDS * 1.08);
    expect(flaky.requests).toBeLessThan(RATE_PER_S * SECONDS * 1.2);
    // Each error delayed its own call only: nothing was parked or held behind a breaker or a rate.
    expect(metric(flaky.metrics, 'eventrelay_delivery_parked_total')).toBe(0);
    expect(metric(flaky.metrics, 'eventrelay_delivery_breaker_changes_total')).toBe(0);
    // No rate in force (0), and the concurrency at the destination's maximum (DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION).
    expect(metric(flaky.metrics, 'eventrelay_delivery_rate_limit')).toBe(0);
    expect(metric(flaky.metrics, 'eventrelay_delivery_concurrency_limit')).toBe(64);
    expect(perRequest(flaky)).toBeLessThanOrEqual(2 * perRequest(healthy));
  }, 300_000);
});
