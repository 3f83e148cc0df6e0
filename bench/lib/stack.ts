/**
 * The system under test for `pnpm bench`: the built ingest, router, webhook-delivery and admin
 * services, each its own process on a free port, sharing one run-unique Redis prefix and one
 * declarative config. webhook-delivery can be SIGKILLed and started again mid-run.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './deps.js';
import { freePort, startServer, type ServerProcess } from './proc.js';

export const STACK_SERVICES = ['ingest', 'router', 'webhook-delivery', 'admin'] as const;
export type StackService = (typeof STACK_SERVICES)[number];

export const distEntry = (svc: StackService): string => path.join(REPO_ROOT, 'services', svc, 'dist', 'index.js');

export interface StackOptions {
  readonly redisUrl: string;
  readonly prefix: string;
  readonly configFile: string;
  readonly adminToken: string;
  readonly logLevel: string;
  /** Extra variables for every service (RETRY_WINDOW_MS, dedupe windows, …). */
  readonly env: Readonly<Record<string, string>>;
}

export interface Stack {
  readonly ingest: ServerProcess;
  readonly router: ServerProcess;
  delivery: ServerProcess;
  readonly admin: ServerProcess;
  /** SIGKILL webhook-delivery (no shutdown: jobs stay active and locked), wait, start a new one. */
  killDelivery(restartAfterMs: number): Promise<void>;
  /** Every process now running, for CPU and memory readings. */
  processes(): { name: StackService; pid: number | undefined }[];
  stop(): Promise<void>;
}

/** Sources i → destination i → `urls[i]`, each with the shared secret. */
export function writeStackConfig(file: string, opts: { writeKeys: readonly string[]; sourceIds: readonly string[]; destinationIds: readonly string[]; urls: readonly string[]; secret: string }): void {
  writeFileSync(
    file,
    JSON.stringify({
      sources: opts.sourceIds.map((id, i) => ({ id, name: `Bench ${i}`, type: 'server', writeKey: opts.writeKeys[i], rateLimitPerSecond: 100_000_000 })),
      destinations: opts.destinationIds.map((id, i) => ({ id, name: 'Webhooks', enabled: true, sourceIds: [opts.sourceIds[i]], settings: { webhooks: [{ url: opts.urls[i] }], sharedSecret: opts.secret } })),
      audiences: [],
    }),
  );
}

/** A service's own variables: its port, and what a bench on loopback needs. */
function serviceEnv(svc: StackService, port: number): Record<string, string> {
  switch (svc) {
    case 'ingest':
      return { INGEST_PORT: String(port), INGEST_HOST: '127.0.0.1' };
    // No audiences service in the benches: the profile feed is off, or its queue would only grow
    // (bench:audiences measures it).
    case 'router':
      return { ROUTER_METRICS_PORT: String(port), ROUTER_FEED_PROFILES: 'false' };
    case 'webhook-delivery':
      return { DELIVERY_METRICS_PORT: String(port), WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' };
    case 'admin':
      return { ADMIN_PORT: String(port), ADMIN_HOST: '127.0.0.1' };
  }
}

/** As the Dockerfile's NODE_OPTIONS: the services run with a 32 MB young generation (see the comment there). */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=32'] as const;

/** One built service on `port` (a free one by default), ready when /readyz answers 200, started as the image starts it. */
export async function startService(svc: StackService, env: NodeJS.ProcessEnv, opts: { port?: number; nodeArgs?: readonly string[] } = {}): Promise<ServerProcess> {
  const port = opts.port ?? (await freePort());
  return startServer({
    name: svc,
    args: [...SERVICE_NODE_FLAGS, ...(opts.nodeArgs ?? []), distEntry(svc)],
    cwd: path.join(REPO_ROOT, 'services', svc),
    env: { ...env, ...serviceEnv(svc, port) },
    port,
    readyPath: '/readyz',
    readyStatus: 200,
  });
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const common = {
    ...process.env,
    REDIS_URL: opts.redisUrl,
    EVENTRELAY_PREFIX: opts.prefix,
    EVENTRELAY_CONFIG: opts.configFile,
    LOG_LEVEL: opts.logLevel,
    NODE_ENV: 'production',
    ...opts.env,
  };
  const deliveryPort = await freePort();
  const startDelivery = () => startService('webhook-delivery', common, { port: deliveryPort });
  // Consumers first, so that nothing waits in a queue for a worker still starting.
  const started: ServerProcess[] = [];
  try {
    const delivery = await startDelivery();
    started.push(delivery);
    const router = await startService('router', common);
    started.push(router);
    const admin = await startService('admin', { ...common, ADMIN_TOKEN: opts.adminToken });
    started.push(admin);
    const ingest = await startService('ingest', common);
    started.push(ingest);

    const stack: Stack = {
      ingest,
      router,
      delivery,
      admin,
      async killDelivery(restartAfterMs) {
        stack.delivery.child.kill('SIGKILL');
        // stop() waits for the exit (a SIGTERM to a process already dying changes nothing).
        await stack.delivery.stop();
        await new Promise((r) => setTimeout(r, restartAfterMs));
        stack.delivery = await startDelivery();
      },
      processes: () => [
        { name: 'ingest', pid: ingest.child.pid },
        { name: 'router', pid: router.child.pid },
        { name: 'webhook-delivery', pid: stack.delivery.child.pid },
        { name: 'admin', pid: admin.child.pid },
      ],
      async stop() {
        for (const s of [ingest, router, stack.delivery, admin]) await s.stop();
      },
    };
    return stack;
  } catch (err) {
    for (const s of started.reverse()) await s.stop();
    throw err;
  }
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
      const query: string = `limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await fetch(`${this.url}/admin/v1/destinations/${destinationId}/dead-letters?${query}`, { headers: { authorization: `Bearer ${this.token}` } });
      if (!res.ok) throw new Error(`admin: GET dead letters of ${destinationId} answered ${res.status}: ${await res.text()}`);
      const page = (await res.json()) as { items: { job: { call: { messageId: string } } }[]; nextCursor: string | null };
      for (const item of page.items) ids.add(item.job.call.messageId);
      cursor = page.nextCursor;
    } while (cursor);
    return ids;
  }
}
