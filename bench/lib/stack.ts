/**
 * The system under test for `pnpm bench`, started by the harness: the built ingest, router,
 * webhook-delivery (one or more replicas) and admin services, each its own process, sharing one
 * run-unique Redis prefix and one declarative config; and the admin API as the bench uses it.
 */
import { writeFileSync } from 'node:fs';
import { startService, startStack, type ServiceProcess, type Stack } from '@eventrelay/testkit';

export const STACK_SERVICES = ['ingest', 'router', 'webhook-delivery', 'admin'] as const;

/** Sources i → destination i → `urls[i]`, each with the shared secret. */
export function writeStackConfig(
  file: string,
  opts: {
    writeKeys: readonly string[];
    sourceIds: readonly string[];
    destinationIds: readonly string[];
    urls: readonly string[];
    secret: string;
  },
): void {
  writeFileSync(
    file,
    JSON.stringify({
      sources: opts.sourceIds.map((id, i) => ({
        id,
        name: `Bench ${i}`,
        type: 'server',
        writeKey: opts.writeKeys[i],
        rateLimitPerSecond: 100_000_000,
      })),
      destinations: opts.destinationIds.map((id, i) => ({
        id,
        name: 'Webhooks',
        enabled: true,
        sourceIds: [opts.sourceIds[i]],
        settings: { webhooks: [{ url: opts.urls[i] }], sharedSecret: opts.secret },
      })),
      audiences: [],
    }),
  );
}

export interface BenchStack {
  readonly stack: Stack;
  /** Replicas of webhook-delivery beyond the stack's own: they share the work through Redis alone. */
  readonly replicas: readonly ServiceProcess[];
  deliveryUrls(): string[];
  /** Every process now running (a restarted webhook-delivery included), for CPU and memory readings. */
  processes(): { name: string; pid: number | undefined }[];
  stop(): Promise<void>;
}

export async function startBenchStack(o: {
  redisUrl: string;
  prefix: string;
  configFile: string;
  adminToken: string;
  logLevel: string;
  env: Readonly<Record<string, string>>;
  deliveries: number;
}): Promise<BenchStack> {
  // No audiences service in the benches: the profile feed is off, or its queue would only grow (bench:audiences measures it).
  const env = { ...process.env, NODE_ENV: 'production', ROUTER_FEED_PROFILES: 'false', ...o.env };
  const stack = await startStack({
    redisUrl: o.redisUrl,
    prefix: o.prefix,
    configFile: o.configFile,
    adminToken: o.adminToken,
    logLevel: o.logLevel,
    env,
    services: STACK_SERVICES,
    echo: 'prefixed',
  });
  const replicas: ServiceProcess[] = [];
  try {
    for (let i = 1; i < o.deliveries; i++)
      replicas.push(
        await startService(
          'webhook-delivery',
          {
            WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
            ...env,
            REDIS_URL: o.redisUrl,
            EVENTRELAY_PREFIX: o.prefix,
            EVENTRELAY_CONFIG: o.configFile,
            LOG_LEVEL: o.logLevel,
          },
          { echo: 'prefixed' },
        ),
      );
  } catch (err) {
    await stack.stop();
    throw err;
  }
  return {
    stack,
    replicas,
    deliveryUrls: () => [stack.url('webhook-delivery'), ...replicas.map((r) => r.url)],
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

/** The admin API, as the bench uses it: switch a destination off, and list its dead letters. */
export class AdminClient {
  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  async setEnabled(destinationId: string, enabled: boolean): Promise<void> {
    const res = await fetch(`${this.url}/admin/v1/destinations/${destinationId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ enabled }),
    });
    if (!res.ok) throw new Error(`admin: PATCH destination ${destinationId} answered ${res.status}: ${await res.text()}`);
  }

  /** Every dead letter's messageId, page by page. */
  async deadLetterIds(destinationId: string): Promise<Set<string>> {
    const ids = new Set<string>();
    let cursor: string | null = null;
    do {
      const res = await fetch(
        `${this.url}/admin/v1/destinations/${destinationId}/dead-letters?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { headers: { authorization: `Bearer ${this.token}` } },
      );
      if (!res.ok) throw new Error(`admin: GET dead letters of ${destinationId} answered ${res.status}: ${await res.text()}`);
      const page = (await res.json()) as { items: { job: { call: { messageId: string } } }[]; nextCursor: string | null };
      for (const item of page.items) ids.add(item.job.call.messageId);
      cursor = page.nextCursor;
    } while (cursor);
    return ids;
  }
}
