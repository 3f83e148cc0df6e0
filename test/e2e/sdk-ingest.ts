/**
 * Starts the real ingest for an SDK suite through test/support's startTestIngest, with the test
 * source also given as a declarative config file (EVENTRELAY_CONFIG, SPEC section 6).
 *
 * Why the config file: startIngest pings its hot-path Redis connection (enableOfflineQueue: false)
 * right after the control connection answers, without waiting for the hot connection to be ready,
 * so start-up intermittently fails with "Stream isn't writeable and enableOfflineQueue options is
 * false" (services/ingest/src/service.ts). Applying a config file puts a few control round trips
 * before that ping, which in practice gives the hot connection time to become ready. The file only
 * repeats the source startTestIngest writes anyway (idempotent upsert). Once service.ts waits for
 * the hot connection, this can become a plain startTestIngest call.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestIngest, type TestIngest } from '../support/ingest';

export async function startSdkIngest(label: string): Promise<TestIngest> {
  const safe = label.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 40);
  const source = { id: 'src-sdk', name: `SDK compat ${label}`.slice(0, 200), type: 'server' as const, writeKey: `wk_${safe.replace(/-/g, '_')}_${randomBytes(6).toString('hex')}` };
  const dir = await mkdtemp(join(tmpdir(), 'eventrelay-sdk-'));
  const file = join(dir, 'eventrelay.json');
  await writeFile(file, JSON.stringify({ sources: [source], destinations: [], audiences: [] }));
  try {
    const t = await startTestIngest({ label: safe, source, env: { EVENTRELAY_CONFIG: file } });
    return {
      ...t,
      close: async () => {
        await t.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
