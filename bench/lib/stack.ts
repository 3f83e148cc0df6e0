/**
 * The system under test for `pnpm bench:chaos`, started by the harness: the built ingest, router,
 * webhook-delivery (one or more replicas) and admin services, each its own process, sharing one
 * run-unique Redis prefix and one declarative config; and the admin API as the bench uses it.
 */
import { writeFileSync } from 'node:fs';
import { startService, startStack, type ServiceProcess } from '@eventrelay/testkit';

export const STACK_SERVICES = ['ingest', 'router', 'webhook-delivery', 'admin'] as const;
export const destinationIdOf = (i: number): string => `dest-${i}`;

/**
 * Source i (write key `writeKeys[i]`) → destination i → `urls[i]`, each with the shared secret; with
 * one write key and more URLs, that one source → every destination. `filters`: every destination's
 * filter rules (destination-filters.schema.json), none by default; `webSources`: the sources that
 * are web sources.
 */
export function stackConfig(
  writeKeys: readonly string[],
  urls: readonly string[],
  secret: string,
  filters?: readonly unknown[],
  webSources: readonly number[] = [],
) {
  // The load's sources are servers without a limit of their own: the bench measures the pipeline. A
  // web source keeps its type's defaults (rate and share of Redis), as a public write key would.
  const sources = writeKeys.map((writeKey, i) => ({
    id: `src-${i}`,
    name: `Bench ${i}`,
    writeKey,
    ...(webSources.includes(i) ? { type: 'web' } : { type: 'server', rateLimitPerSecond: 1e8 }),
  }));
  const destinations = urls.map((url, i) => ({
    id: destinationIdOf(i),
    name: 'Webhooks',
    enabled: true,
    sourceIds: [writeKeys.length === 1 ? 'src-0' : `src-${i}`],
    settings: { webhooks: [{ url }], sharedSecret: secret },
    ...(filters ? { filters } : {}),
  }));
  return { sources, destinations, audiences: [] };
}

/** stackConfig(…) written to `file`, the config the services load. */
export function writeStackConfig(file: string, ...args: Parameters<typeof stackConfig>): void {
  writeFileSync(file, JSON.stringify(stackConfig(...args)));
}

/** The stack, plus `deliveries - 1` more webhook-delivery replicas that share the work through Redis alone. */
export async function startBenchStack(o: {
  redisUrl: string;
  prefix: string;
  configFile: string;
  adminToken: string;
  logLevel: string;
  env: Readonly<Record<string, string>>;
  deliveries: number;
}) {
  // No audiences service in the benches: the profile feed is off, or its queue would only grow (bench:audiences measures it).
  const env = { ...process.env, NODE_ENV: 'production', ROUTER_FEED_PROFILES: 'false', ...o.env };
  const stack = await startStack({ ...o, env, services: STACK_SERVICES, echo: 'prefixed' });
  const replicas: ServiceProcess[] = [];
  try {
    const replicaEnv = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', ...env, REDIS_URL: o.redisUrl, EVENTRELAY_PREFIX: o.prefix };
    for (let i = 1; i < o.deliveries; i++)
      replicas.push(
        await startService(
          'webhook-delivery',
          { ...replicaEnv, EVENTRELAY_CONFIG: o.configFile, LOG_LEVEL: o.logLevel },
          { echo: 'prefixed' },
        ),
      );
  } catch (err) {
    await stack.stop();
    throw err;
  }
  return {
    url: (name: (typeof STACK_SERVICES)[number]) => stack.url(name),
    restart: (...args: Parameters<typeof stack.restart>) => stack.restart(...args),
    deliveryUrls: () => [stack.url('webhook-delivery'), ...replicas.map((r) => r.url)],
    /** Every process now running (a restarted webhook-delivery included), for CPU and memory readings. */
    processes: () => [
      ...stack.processes().map((p) => ({ name: p.service, pid: p.pid })),
      ...replicas.map((r, i) => ({ name: `webhook-delivery-${i + 2}`, pid: r.pid })),
    ],
    async stop() {
      for (const r of replicas) await r.stop();
      await stack.stop();
    },
  };
}

/** The admin API, as the bench uses it: switch a destination off, and list its dead letters' messageIds. */
export function adminClient(url: string, token: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json' };
    const res = await fetch(`${url}/admin/v1/destinations/${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`admin: ${method} ${path} answered ${res.status}: ${await res.text()}`);
    return res.json() as Promise<{ items: { job: { call: { messageId: string } } }[]; nextCursor: string | null }>;
  };
  return {
    disable: (id: string) => call('PATCH', id, { enabled: false }),
    async deadLetterIds(id: string): Promise<Set<string>> {
      const ids = new Set<string>();
      for (let cursor: string | null = ''; cursor !== null;) {
        const page = await call('GET', `${id}/dead-letters?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        for (const item of page.items) ids.add(item.job.call.messageId);
        cursor = page.nextCursor;
      }
      return ids;
    },
  };
}
