/**
 * The compiled webhook-delivery as operators run it: bad start-up input stops it with a message naming what
 * is wrong, and once ready SIGTERM shuts it down cleanly (exit 0).
 */
import { SHARED_REDIS_URL, deletePrefix, freePort, uniquePrefix } from '../../../test/support/redis';
import { buildService, runToExit, spawnService, waitForOk } from '../../../test/support/service-process';

describe('the webhook-delivery process', () => {
  const prefix = uniquePrefix('proc');
  beforeAll(() => buildService('webhook-delivery'), 120_000);
  afterAll(() => deletePrefix(SHARED_REDIS_URL, prefix));

  it('refuses to start on bad environment values and names every bad variable', async () => {
    const result = await runToExit('webhook-delivery', { DELIVERY_TIMEOUT_MS: 'soon', RETRY_WINDOW_MS: '0', WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8, not-a-network, 300.1.1.1/8', DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: '0' });
    expect(result.code).toBe(1);
    for (const name of ['DELIVERY_TIMEOUT_MS', 'RETRY_WINDOW_MS', 'WEBHOOK_ALLOWED_NETWORKS', 'not-a-network', '300.1.1.1/8', 'DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION']) expect(result.output).toContain(name);
  });

  it('refuses to start on a config file that does not exist, naming it', async () => {
    const result = await runToExit('webhook-delivery', { REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, EVENTRELAY_CONFIG: '/nonexistent/eventrelay.json', DELIVERY_METRICS_PORT: '0' });
    expect(result.code).toBe(1);
    expect(result.output).toContain('EVENTRELAY_CONFIG');
    expect(result.output).toContain('/nonexistent/eventrelay.json');
  });

  it('serves /healthz, /readyz and /metrics, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const child = spawnService('webhook-delivery', { REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, DELIVERY_METRICS_PORT: String(port), LOG_LEVEL: 'info' });
    try {
      await waitForOk(`http://127.0.0.1:${port}/readyz`);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toContain('eventrelay_');
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(child.output()).toContain('shutdown.done');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 30_000);
});

describe('the webhook-delivery process, CA file', () => {
  it('refuses to start when WEBHOOK_CA_FILE cannot be read or holds no certificate', async () => {
    const missing = await runToExit('webhook-delivery', { WEBHOOK_CA_FILE: '/nonexistent/ca.pem' });
    expect(missing.code).toBe(1);
    expect(missing.output).toContain('WEBHOOK_CA_FILE');
    const notPem = await runToExit('webhook-delivery', { WEBHOOK_CA_FILE: __filename });
    expect(notPem.code).toBe(1);
    expect(notPem.output).toMatch(/WEBHOOK_CA_FILE: .* holds no PEM certificate/);
  });
});
