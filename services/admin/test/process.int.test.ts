/**
 * The compiled admin API as operators run it: bad start-up input stops it with a message naming
 * each bad variable, and once serving, SIGTERM shuts it down with exit 0.
 */
import { buildServices, deletePrefix, runServiceToExit, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';
import { expectServesThenStops } from '../../../test/support/process-checks';

describe('the admin process', () => {
  const prefix = uniquePrefix('proc');
  beforeAll(() => buildServices('admin'), 120_000);
  afterAll(() => deletePrefix(SHARED_REDIS_URL, prefix));

  it('refuses to start on bad environment values and names every bad variable', async () => {
    const result = await runServiceToExit('admin', {
      ADMIN_PORT: 'eighty',
      ADMIN_AUDIT_MAX: '0',
      ADMIN_TOKEN: 'short',
      REDIS_URL: 'http://nope',
    });
    expect(result.code).toBe(1);
    for (const name of ['ADMIN_PORT', 'ADMIN_AUDIT_MAX', 'ADMIN_TOKEN', 'REDIS_URL']) expect(result.output).toContain(name);
    // The token itself is a secret: the message names the variable, not its value.
    expect(result.output).not.toContain('short');
  });

  it('refuses to start without ADMIN_TOKEN, saying how to set one', async () => {
    const result = await runServiceToExit('admin', { REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, ADMIN_PORT: '0' });
    expect(result.code).toBe(1);
    expect(result.output).toContain('ADMIN_TOKEN');
  });

  it('serves /healthz, /readyz and /metrics without a token, and exits 0 on SIGTERM', async () => {
    await expectServesThenStops(
      'admin',
      { REDIS_URL: SHARED_REDIS_URL, EVENTRELAY_PREFIX: prefix, ADMIN_TOKEN: 'test-admin-token-0123456789', LOG_LEVEL: 'info' },
      'ADMIN_PORT',
      {
        metric: 'eventrelay_admin_requests_total',
        // The admin API itself wants the token.
        otherPath: { path: '/admin/v1/sources', status: 401 },
      },
    );
  }, 30_000);
});
