/** Starts the real ingest for an SDK suite, with a source and write key of the suite's own. */
import { randomBytes } from 'node:crypto';
import { startTestIngest, type TestIngest } from '../support/ingest';

export function startSdkIngest(label: string): Promise<TestIngest> {
  const safe = label.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 40);
  const source = {
    id: 'src-sdk',
    name: `SDK compat ${label}`.slice(0, 200),
    type: 'server' as const,
    writeKey: `wk_${safe.replace(/-/g, '_')}_${randomBytes(6).toString('hex')}`,
  };
  return startTestIngest({ label: safe, source });
}
