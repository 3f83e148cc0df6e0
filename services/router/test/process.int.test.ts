/**
 * The compiled router as operators run it: bad start-up input stops it with a message naming what
 * is wrong, and once ready SIGTERM shuts it down cleanly (exit 0).
 */
import { SHARED_REDIS_URL, deletePrefix, freePort, uniquePrefix } from '../../../test/support/redis';
import { buildService, runToExit, spawnService, waitForOk } from '../../../test/support/service-process';

describe('the router process', () => {
  const prefix = uniquePrefix('proc');
  beforeAll(() => buildService('router'), 120_000);
  afterAll(() => deletePrefix(SHARED_REDIS_URL, prefix));

  it('refuses to start on bad environment values and names every bad variable', async () => {
    const result = await runToExit('router', { ROUTER_METRICS_PORT: 'ninety', ROUTER_CONCURRENCY: '0', ROUTER_DEDUPE_WINDOW_S: '-5', EVENTRELAY_PREFIX: 'a:b' });
    expect(result.code).toBe(1);
    for (const name of ['ROUTER_METRICS_PORT', 'ROUTER_CONCURRENCY', 'ROUTER_DEDUPE_WINDOW_S', 'EVENTRELAY_PREFIX']) expect(result.output).toContain(name);
  });

  it('refuses to start on a config file that does not exist, naming it', async () => {
    const result = await runToExit('router', { REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, EVENTRELAY_CONFIG: '/nonexistent/eventrelay.json', ROUTER_METRICS_PORT: '0' });
    expect(result.code).toBe(1);
    expect(result.output).toContain('EVENTRELAY_CONFIG');
    expect(result.output).toContain('/nonexistent/eventrelay.json');
  });

  it('serves /healthz, /readyz and /metrics, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const child = spawnService('router', { REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, ROUTER_METRICS_PORT: String(port), LOG_LEVEL: 'info' });
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
