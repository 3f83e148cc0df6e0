/**
 * The compiled admin API as operators run it: bad start-up input stops it with a message naming
 * each bad variable, and once serving, SIGTERM shuts it down with exit 0.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildServices, deletePrefix, runServiceToExit, SHARED_REDIS_URL, startService, uniquePrefix } from '@eventrelay/testkit';
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
      EVENTRELAY_CONFIG_MODE: 'always',
    });
    expect(result.code).toBe(1);
    for (const name of ['ADMIN_PORT', 'ADMIN_AUDIT_MAX', 'ADMIN_TOKEN', 'REDIS_URL', 'EVENTRELAY_CONFIG_MODE'])
      expect(result.output).toContain(name);
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

  it('restarted with its config file, keeps a write key rotated through the API (seed) or puts the file back (sync)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'eventrelay-admin-proc-'));
    const file = path.join(dir, 'config.json');
    await writeFile(file, JSON.stringify({ sources: [{ id: 'web', name: 'Web', type: 'web', writeKey: 'file-write-key-0001' }] }));
    const configPrefix = uniquePrefix('proc-config');
    const token = 'test-admin-token-0123456789';
    const env = (mode: string) => ({
      REDIS_URL: SHARED_REDIS_URL,
      EVENTRELAY_PREFIX: configPrefix,
      ADMIN_TOKEN: token,
      EVENTRELAY_CONFIG: file,
      EVENTRELAY_CONFIG_MODE: mode,
    });
    const call = async (url: string, method: string, route: string) =>
      (await (await fetch(`${url}/admin/v1${route}`, { method, headers: { authorization: `Bearer ${token}` } })).json()) as {
        writeKey: string;
        items: { tokenId: string; action: string }[];
      };
    let admin: Awaited<ReturnType<typeof startService>> | undefined;
    try {
      admin = await startService('admin', env('seed'));
      const rotated = (await call(admin.url, 'POST', '/sources/web/rotate-write-key')).writeKey;
      await admin.stop('SIGTERM');
      admin = await startService('admin', env('seed'));
      expect((await call(admin.url, 'GET', '/sources/web')).writeKey).toBe(rotated);
      await admin.stop('SIGTERM');
      admin = await startService('admin', env('sync'));
      expect((await call(admin.url, 'GET', '/sources/web')).writeKey).toBe('file-write-key-0001');
      expect((await call(admin.url, 'GET', '/audit')).items[0]).toMatchObject({ tokenId: 'config-file', action: 'source.update' });
      await admin.stop('SIGTERM');
    } finally {
      if (admin?.running()) await admin.stop('SIGKILL');
      await deletePrefix(SHARED_REDIS_URL, configPrefix);
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
