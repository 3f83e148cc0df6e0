/**
 * EVENTRELAY_CONFIG_MODE (docs/spec.md §6): the config file never silently undoes the API. `seed`
 * applies the file only into a prefix nothing was ever written to, so a write key rotated through
 * the API survives a restart with the same file; `sync` puts the file's values back at every start,
 * and the audit log says the file did it. Real admin processes (their start function) on real Redis,
 * restarted on one prefix.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { ConfigStore } from '@eventrelay/stores';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';
import { startTestAdmin, type TestAdmin } from '../../../test/support/admin';

const FILE_KEY = 'file-write-key-0001';

interface AuditItem {
  tokenId: string;
  action: string;
  targetId: string;
  details?: Record<string, unknown>;
}

describe('EVENTRELAY_CONFIG_MODE', () => {
  let dir: string;
  let file: string;
  let redis: Redis;
  const prefixes: string[] = [];
  const running: TestAdmin[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'eventrelay-config-mode-'));
    file = path.join(dir, 'eventrelay.config.json');
    await writeFile(
      file,
      JSON.stringify({
        sources: [{ id: 'web', name: 'Web', type: 'web', writeKey: FILE_KEY }],
        destinations: [
          {
            id: 'hooks',
            name: 'Webhooks',
            enabled: true,
            sourceIds: ['web'],
            settings: { webhooks: [{ url: 'https://hooks.example.com/in', headers: { Authorization: 'Bearer from-file' } }] },
          },
        ],
      }),
    );
    redis = new Redis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    await Promise.all(running.map((a) => a.close().catch(() => undefined)));
    await redis.quit();
    for (const prefix of prefixes) await deletePrefix(SHARED_REDIS_URL, prefix);
    await rm(dir, { recursive: true, force: true });
  });

  const start = async (prefix: string, mode?: 'seed' | 'sync') => {
    const admin = await startTestAdmin({ prefix, env: { EVENTRELAY_CONFIG: file, ...(mode ? { EVENTRELAY_CONFIG_MODE: mode } : {}) } });
    running.push(admin);
    return admin;
  };
  const stop = async (admin: TestAdmin) => {
    await admin.close();
    running.splice(running.indexOf(admin), 1);
  };
  const audit = async (admin: TestAdmin): Promise<AuditItem[]> => (await admin.call('GET', '/audit?limit=1000')).body.items;
  const fromFile = (items: AuditItem[]) => items.filter((i) => i.tokenId === 'config-file');

  /** First start seeds the file, then the write key is rotated through the API; returns the new key. */
  async function seedThenRotate(prefix: string, mode: 'seed' | 'sync' | undefined) {
    const first = await start(prefix, mode);
    expect((await first.call('GET', '/sources/web')).body.writeKey).toBe(FILE_KEY);
    expect(fromFile(await audit(first)).map((i) => [i.action, i.targetId, i.details])).toEqual([
      ['destination.create', 'hooks', { file, mode: mode ?? 'seed' }],
      ['source.create', 'web', { file, mode: mode ?? 'seed' }],
    ]);
    const rotated = await first.call('POST', '/sources/web/rotate-write-key');
    expect(rotated.status).toBe(200);
    await stop(first);
    return rotated.body.writeKey as string;
  }

  it('seed (the default) keeps a write key rotated through the API across a restart with the same file', async () => {
    const prefix = uniquePrefix('config-seed');
    prefixes.push(prefix);
    const rotatedKey = await seedThenRotate(prefix, undefined);
    const store = new ConfigStore(redis, prefix);
    const versionBefore = await store.version();

    const again = await start(prefix);
    expect((await again.call('GET', '/sources/web')).body.writeKey).toBe(rotatedKey);
    expect((await store.sourceByWriteKey(FILE_KEY))?.id).toBeUndefined();
    expect((await store.sourceByWriteKey(rotatedKey))?.id).toBe('web');
    // Nothing written at all: no version bump, no audit entry by the file.
    expect(await store.version()).toBe(versionBefore);
    expect(fromFile(await audit(again))).toHaveLength(2);
  });

  it('sync puts the file back over the API at restart, audited as the file, and writes nothing when nothing differs', async () => {
    const prefix = uniquePrefix('config-sync');
    prefixes.push(prefix);
    const rotatedKey = await seedThenRotate(prefix, 'sync');
    const store = new ConfigStore(redis, prefix);

    const synced = await start(prefix, 'sync');
    expect((await synced.call('GET', '/sources/web')).body.writeKey).toBe(FILE_KEY);
    expect((await store.sourceByWriteKey(FILE_KEY))?.id).toBe('web');
    expect(await store.sourceByWriteKey(rotatedKey)).toBeUndefined();
    const [latest, ...older] = await audit(synced);
    expect(latest).toEqual({
      at: expect.any(String),
      tokenId: 'config-file',
      action: 'source.update',
      targetId: 'web',
      details: { file, mode: 'sync', fields: ['writeKey'] },
    });
    // The rotation through the API is there too, under its token; the file's entries name no value.
    expect(older[0]).toMatchObject({ action: 'source.rotate_write_key', targetId: 'web' });
    expect(older[0]!.tokenId).toMatch(/^tok_/);
    expect(JSON.stringify(await audit(synced))).not.toContain(FILE_KEY);
    await stop(synced);

    const versionBefore = await store.version();
    const unchanged = await start(prefix, 'sync');
    expect(await store.version()).toBe(versionBefore);
    expect(fromFile(await audit(unchanged))).toHaveLength(3);
  });

  it.each(['seed', 'sync'] as const)('%s: processes starting at once with the file write it once, audited once', async (mode) => {
    const prefix = uniquePrefix(`config-race-${mode}`);
    prefixes.push(prefix);
    const admins = await Promise.all([start(prefix, mode), start(prefix, mode), start(prefix, mode)]);
    const store = new ConfigStore(redis, prefix);
    expect(await store.version()).toBe(1);
    expect(fromFile(await audit(admins[0])).map((i) => i.action)).toEqual(['destination.create', 'source.create']);
    expect((await store.sourceByWriteKey(FILE_KEY))?.id).toBe('web');
  });
});
