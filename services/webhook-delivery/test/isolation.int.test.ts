/**
 * One hung receiver must not starve the others (the per-destination cap of destination-gate.ts,
 * DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION). Ten destinations share one delivery process: nine
 * receivers answer 200 at once, one accepts requests and never answers. A steady stream of calls
 * goes to all ten for eight seconds, during all of which the tenth hangs.
 *
 * Contrast, why the cap matters: without it the worker's DELIVERY_CONCURRENCY slots (32 here) are
 * filled in queue order, and a job for the hung destination keeps its slot for the whole attempt
 * timeout (4 s) while a healthy job frees its slot within milliseconds. So the worker keeps
 * pulling jobs only until all 32 slots hold hung jobs, then stalls until they time out: about
 * nine healthy jobs move per hung job, i.e. each healthy receiver gets about 32 calls per 4 s
 * (8/s) of the 50/s it is sent, and its backlog grows for as long as the hang lasts. Measured
 * with this file and the cap lifted (DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION=10000): 65 or 66 of
 * 400 calls per healthy receiver at the end of the stream, the hung one holding 32 requests open.
 * With the cap of 8 the hung destination holds at most 8 requests open (plus at most 8 jobs
 * waiting briefly before they are parked in the delayed set), which leaves the healthy ones at
 * least 16 slots: measured 400 of 400 each, also with two CPU-burning processes beside the test.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually, type Receiver, startReceiver } from '@eventrelay/testkit';
import { startTestPipeline, trackCall, webhookDestination, type TestPipeline } from '../../../test/support/pipeline';

const HEALTHY = 9;
const CONCURRENCY = 32;
const CAP = 8;
const TIMEOUT_MS = 4_000;
/** The stream: CALLS_PER_TICK calls to all ten destinations every TICK_MS, for TICKS ticks (8 s). */
const TICK_MS = 100;
const CALLS_PER_TICK = 5;
const TICKS = 80;
/**
 * Share of the calls sent so far that every healthy receiver must hold when the stream ends. With
 * the cap a healthy receiver lags the stream only by the router's and the worker's pick-up time
 * (tens of ms idle, a few hundred on a loaded 2-core machine), so it holds nearly all of it (400
 * of 400 measured, idle and under CPU load). Starved, it could hold at most one batch of slots per
 * timeout round: (1 + 8 s / 4 s) rounds x 32 slots = 96 of 400, 24% (16% measured). One half sits
 * far from both, so the test neither flakes under load nor passes without the cap.
 */
const FLOOR_SHARE = 0.5;

/** A receiver that accepts every request and never answers, counting how many it holds open at once. */
interface HungReceiver {
  readonly url: string;
  received(): number;
  maxOpen(): number;
  close(): Promise<void>;
}

async function startHungReceiver(): Promise<HungReceiver> {
  let received = 0;
  let open = 0;
  let maxOpen = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      open++;
      maxOpen = Math.max(maxOpen, open);
      // Fires when the client gives up (its attempt timeout) and closes the connection.
      res.on('close', () => open--);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received: () => received,
    maxOpen: () => maxOpen,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('a hung receiver does not starve the other destinations', () => {
  let healthy: Receiver[] = [];
  let hung: HungReceiver;
  let pipeline: TestPipeline;

  beforeAll(async () => {
    healthy = await Promise.all(Array.from({ length: HEALTHY }, () => startReceiver()));
    hung = await startHungReceiver();
    pipeline = await startTestPipeline({
      label: 'isolation',
      destinations: [...healthy.map((r, i) => webhookDestination(`dest-ok-${i}`, [r.url])), webhookDestination('dest-hung', [hung.url])],
      deliveryEnv: {
        DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
        DELIVERY_CONCURRENCY: String(CONCURRENCY),
        DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: String(CAP),
      },
    });
  });

  afterAll(async () => {
    await pipeline?.close();
    await hung?.close();
    await Promise.all(healthy.map((r) => r.close()));
  });

  it('keeps delivering to the nine healthy receivers while the tenth hangs', async () => {
    const runId = Date.now().toString(36);
    let sent = 0;
    for (let tick = 0; tick < TICKS; tick++) {
      const calls = Array.from({ length: CALLS_PER_TICK }, (_, i) => trackCall(`iso-${runId}-${tick}-${i}`));
      await pipeline.route(calls);
      sent += calls.length;
      await new Promise((r) => setTimeout(r, TICK_MS));
    }
    // The snapshot is taken while the hang is still going on: the hung receiver has answered nothing.
    const got = healthy.map((r) => new Set(r.requests.map((q) => q.headers['x-eventrelay-message-id'])).size);
    const hungReceived = hung.received();
    console.log(
      `isolation test: ${sent} calls sent to each destination; at the end of the stream the healthy receivers had ${got.join(', ')}; the hung one had been sent ${hungReceived} requests, at most ${hung.maxOpen()} open at once`,
    );

    const floor = Math.ceil(sent * FLOOR_SHARE);
    expect(got).toEqual(got.map((n) => (n >= floor ? n : `fewer than ${floor}: ${n}`)));

    // The hung one was tried, never held more than its cap open, and its attempts are failures.
    expect(hungReceived).toBeGreaterThanOrEqual(CAP);
    expect(hung.maxOpen()).toBeLessThanOrEqual(CAP);
    const attempts = await pipeline.attempts('dest-hung');
    expect(attempts.length).toBeGreaterThanOrEqual(CAP);
    expect(attempts.filter((a) => a.outcome !== 'retryable')).toEqual([]);
    expect(attempts.filter((a) => !/^timeout/.test(a.error ?? ''))).toEqual([]);

    // And the healthy ones get all of it, each once.
    await eventually(() => {
      for (const r of healthy) expect(r.requests.length).toBe(sent);
    }, 20_000);
    for (const r of healthy) expect(new Set(r.requests.map((q) => q.headers['x-eventrelay-message-id'])).size).toBe(sent);
  }, 60_000);
});
