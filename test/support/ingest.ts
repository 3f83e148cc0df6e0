/**
 * Runs the real ingest service in the test process against real Redis, with a demo source, and
 * reads back what it put on the route queue.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { queueCatalog, type NormalizedCall, type RouteJob, type Source } from '@eventrelay/config';
import { createMetricsRegistry } from '@eventrelay/runtime';
import { CallBatches, ConfigStore } from '@eventrelay/stores';
import { loadEnv } from '../../services/ingest/src/env';
import { startIngest, type RunningIngest } from '../../services/ingest/src/service';
import { SHARED_REDIS_URL, deletePrefix, uniquePrefix } from '@eventrelay/testkit';

export interface TestIngest {
  readonly url: string;
  readonly prefix: string;
  readonly redisUrl: string;
  readonly source: Source;
  readonly writeKey: string;
  readonly ingest: RunningIngest;
  readonly store: ConfigStore;
  /** What the route queue holds: each route job's calls, by source, in job and call order. */
  routeJobs(): Promise<QueuedBatch[]>;
  close(): Promise<void>;
}

/** One source's calls in one route job (a route job holds every source of an ingest flush). */
interface QueuedBatch {
  readonly batchId: string;
  readonly sourceId: string;
  readonly calls: NormalizedCall[];
}

export interface TestIngestOptions {
  label?: string;
  redisUrl?: string;
  env?: Record<string, string>;
  source?: Partial<Source>;
  clock?: () => number;
  /** How held refusals wait (INGEST_REFUSAL_HOLD_MS); a timer by default. */
  sleep?: (ms: number) => Promise<void>;
}

export async function startTestIngest(options: TestIngestOptions = {}): Promise<TestIngest> {
  const redisUrl = options.redisUrl ?? SHARED_REDIS_URL;
  const prefix = uniquePrefix(options.label ?? 'ingest');
  const source: Source = {
    id: 'src-test',
    name: 'Test source',
    type: 'server',
    writeKey: `wk_${prefix.replace(/\W/g, '')}`,
    ...options.source,
  };
  const admin = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const store = new ConfigStore(admin, prefix);
  await store.apply({ sources: [source], destinations: [], audiences: [] });
  const env = loadEnv({
    REDIS_URL: redisUrl,
    EVENTRELAY_PREFIX: prefix,
    INGEST_PORT: '0',
    INGEST_HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ...options.env,
  });
  let ingest: RunningIngest;
  try {
    ingest = await startIngest(env, {
      logger: pino({ level: 'silent' }),
      registry: createMetricsRegistry('ingest'),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
  } catch (err) {
    admin.disconnect();
    throw err;
  }
  const queue = new Queue<RouteJob>(queueCatalog.route.name, { connection: admin, prefix });
  const batches = new CallBatches(admin, prefix);
  // Outage tests stop Redis on purpose; the reconnect errors are expected.
  queue.on('error', () => undefined);
  return {
    url: `http://127.0.0.1:${ingest.port}`,
    prefix,
    redisUrl,
    source,
    writeKey: source.writeKey,
    ingest,
    store,
    async routeJobs() {
      const jobs = await queue.getJobs(['wait', 'active', 'delayed', 'completed', 'failed'], 0, -1, true);
      const out: QueuedBatch[] = [];
      for (const job of jobs) for (const part of await batches.contents(job.data.batchId)) out.push({ batchId: job.data.batchId, ...part });
      return out;
    },
    async close() {
      await ingest.close();
      await queue.close();
      await deletePrefix(redisUrl, prefix).catch(() => undefined);
      admin.disconnect();
    },
  };
}

/** POSTs JSON (or raw bytes) to the intake with Basic auth by default. */
export async function post(
  baseUrl: string,
  path: string,
  body: unknown,
  options: { writeKey?: string | null; headers?: Record<string, string>; raw?: Buffer | string } = {},
): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.writeKey) headers['authorization'] = `Basic ${Buffer.from(`${options.writeKey}:`).toString('base64')}`;
  const res = await fetch(`${baseUrl}${path}`, { method: 'POST', headers, body: options.raw ?? JSON.stringify(body) });
  const text = await res.text();
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = { unparsed: text };
  }
  return { status: res.status, headers: res.headers, json };
}
