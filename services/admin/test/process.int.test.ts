/**
 * The compiled admin API as operators run it: bad start-up input stops it with a message naming
 * each bad variable, and once serving, SIGTERM shuts it down with exit 0.
 */
import { SHARED_REDIS_URL, deletePrefix, freePort, uniquePrefix } from '../../../test/support/redis';
import { buildService, runToExit, spawnService, waitForOk } from '../../../test/support/service-process';

describe('the admin process', () => {
  const prefix = uniquePrefix('proc');
  beforeAll(() => buildService('admin'), 120_000);
  afterAll(() => deletePrefix(SHARED_REDIS_URL, prefix));

  it('refuses to start on bad environment values and names every bad variable', async () => {
    const result = await runToExit('admin', { ADMIN_PORT: 'eighty', ADMIN_AUDIT_MAX: '0', ADMIN_TOKEN: 'short', REDIS_URL: 'http://nope' });
    expect(result.code).toBe(1);
    for (const name of ['ADMIN_PORT', 'ADMIN_AUDIT_MAX', 'ADMIN_TOKEN', 'REDIS_URL']) expect(result.output).toContain(name);
    // The token itself is a secret: the message names the variable, not its value.
    expect(result.output).not.toContain('short');
  });

  it('refuses to start without ADMIN_TOKEN, saying how to set one', async () => {
    const result = await runToExit('admin', { REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, ADMIN_PORT: '0' });
    expect(result.code).toBe(1);
    expect(result.output).toContain('ADMIN_TOKEN');
  });

  it('serves /healthz, /readyz and /metrics without a token, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const child = spawnService('admin', { REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, ADMIN_PORT: String(port), ADMIN_TOKEN: 'test-admin-token-0123456789', LOG_LEVEL: 'info' });
    try {
      await waitForOk(`http://127.0.0.1:${port}/readyz`);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain('eventrelay_admin_requests_total');
      expect((await fetch(`http://127.0.0.1:${port}/admin/v1/sources`)).status).toBe(401);
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(child.output()).toContain('shutdown.done');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 30_000);
});
