/**
 * The compiled services run as operators run them: `node --max-semi-space-size=32
 * services/<name>/dist/index.js`, each on its own port, ready when /readyz answers 200.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './env.js';
import { freePort, runToExit, startChild, type ChildHandle, type Exit } from './process.js';

/** In pipeline order, then the admin API. */
const SERVICE_NAMES = ['ingest', 'router', 'webhook-delivery', 'audiences', 'admin'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** As the Dockerfile's NODE_OPTIONS: the services run with a 32 MB young generation (see the comment there). */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=32'] as const;

/** The variable that sets each service's HTTP port (the intake and admin API, or the ops server of a worker). */
const SERVICE_PORT_VARIABLE: Readonly<Record<ServiceName, string>> = {
  ingest: 'INGEST_PORT',
  router: 'ROUTER_METRICS_PORT',
  'webhook-delivery': 'DELIVERY_METRICS_PORT',
  audiences: 'AUDIENCES_METRICS_PORT',
  admin: 'ADMIN_PORT',
};

/** Variables that bind a service to loopback, where it has a host setting. */
const LOOPBACK: Readonly<Partial<Record<ServiceName, Record<string, string>>>> = {
  ingest: { INGEST_HOST: '127.0.0.1' },
  admin: { ADMIN_HOST: '127.0.0.1' },
};

export const distEntry = (name: ServiceName): string => path.join(REPO_ROOT, 'services', name, 'dist', 'index.js');

/** `tsc -b` of the named services (all by default): incremental, a no-op when the build is current. */
export function buildServices(...names: ServiceName[]): void {
  const projects = (names.length > 0 ? names : SERVICE_NAMES).map((n) => path.join(REPO_ROOT, 'services', n));
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-b', ...projects], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
}

export interface ServiceProcess extends ChildHandle {
  readonly service: ServiceName;
  readonly port: number;
  /** http://127.0.0.1:<port> */
  readonly url: string;
}

export interface ServiceOptions {
  /** Listen here (a free port by default). */
  readonly port?: number;
  /** Node flags after SERVICE_NODE_FLAGS (for example --cpu-prof). */
  readonly nodeArgs?: readonly string[];
  readonly cwd?: string;
  readonly echo?: 'raw' | 'prefixed';
  readonly detached?: boolean;
  readonly readyTimeoutMs?: number;
}

/**
 * Starts a built service with `env` (its whole environment, plus PATH; its port variable and, for
 * ingest and admin, a loopback host are set here) and waits until /readyz answers 200.
 */
export async function startService(name: ServiceName, env: NodeJS.ProcessEnv, options: ServiceOptions = {}): Promise<ServiceProcess> {
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const handle = await startChild({
    name,
    args: [...SERVICE_NODE_FLAGS, ...(options.nodeArgs ?? []), distEntry(name)],
    env: { ...LOOPBACK[name], ...env, [SERVICE_PORT_VARIABLE[name]]: String(port) },
    readyTimeoutMs: options.readyTimeoutMs ?? 30_000,
    ready: async () => (await readyz(url)) === 200,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.echo ? { echo: options.echo } : {}),
    ...(options.detached ? { detached: true } : {}),
  });
  return Object.assign(handle, { service: name, port, url });
}

/** Runs a built service until it exits (for start-up failures), SIGKILLed after `timeoutMs`. */
export function runServiceToExit(name: ServiceName, env: NodeJS.ProcessEnv, timeoutMs = 15_000): Promise<Exit & { output: string }> {
  return runToExit({ name, args: [...SERVICE_NODE_FLAGS, distEntry(name)], env }, timeoutMs);
}

async function readyz(url: string): Promise<number | undefined> {
  try {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return undefined;
  }
}

export interface StackOptions {
  readonly redisUrl: string;
  readonly prefix: string;
  /** Which services, started consumers first (webhook-delivery, router, audiences, admin, ingest); all of them by default. */
  readonly services?: readonly ServiceName[];
  /** EVENTRELAY_CONFIG, a declarative config applied at start. */
  readonly configFile?: string;
  /** LOG_LEVEL (default warn). */
  readonly logLevel?: string;
  /** ADMIN_TOKEN for the admin API (a fixed test token by default). */
  readonly adminToken?: string;
  /** Variables for every service, over the defaults (WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8 lets delivery reach loopback receivers). */
  readonly env?: NodeJS.ProcessEnv;
  /** Variables for one service, over `env`. */
  readonly serviceEnv?: Partial<Record<ServiceName, NodeJS.ProcessEnv>>;
  /** Fixed ports (free ones by default). */
  readonly ports?: Partial<Record<ServiceName, number>>;
  readonly echo?: 'raw' | 'prefixed';
  readonly detached?: boolean;
}

export interface Stack {
  readonly redisUrl: string;
  readonly prefix: string;
  /** The running process of a service started with the stack (throws for one that was not). */
  get(name: ServiceName): ServiceProcess;
  url(name: ServiceName): string;
  /** Every service now running, in start order. */
  processes(): ServiceProcess[];
  /** Stops a service with `signal` (SIGKILL: no shutdown, its jobs stay active and locked), waits `afterMs`, starts it again on its port. */
  restart(name: ServiceName, options?: { signal?: NodeJS.Signals; afterMs?: number }): Promise<ServiceProcess>;
  /** SIGTERM to each, in the reverse of start order (ingest first), waiting for each exit. */
  stop(): Promise<void>;
}

/** Consumers first, so that nothing waits in a queue for a worker still starting. */
const START_ORDER: readonly ServiceName[] = ['webhook-delivery', 'router', 'audiences', 'admin', 'ingest'];

const STACK_ADMIN_TOKEN = 'testkit-admin-token-0123456789';

/** Starts the chosen built services against one Redis and prefix, each ready before the next starts. */
export async function startStack(options: StackOptions): Promise<Stack> {
  const chosen = START_ORDER.filter((s) => (options.services ?? SERVICE_NAMES).includes(s));
  const common: NodeJS.ProcessEnv = {
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    ...options.env,
    REDIS_URL: options.redisUrl,
    EVENTRELAY_PREFIX: options.prefix,
    LOG_LEVEL: options.logLevel ?? options.env?.['LOG_LEVEL'] ?? 'warn',
    ...(options.configFile ? { EVENTRELAY_CONFIG: options.configFile } : {}),
  };
  const envOf = (name: ServiceName): NodeJS.ProcessEnv => ({
    ...common,
    ...(name === 'admin' ? { ADMIN_TOKEN: options.adminToken ?? STACK_ADMIN_TOKEN } : {}),
    ...options.serviceEnv?.[name],
  });
  const ports = new Map<ServiceName, number>();
  const running = new Map<ServiceName, ServiceProcess>();
  const start = async (name: ServiceName) => {
    const port = ports.get(name) ?? options.ports?.[name] ?? (await freePort());
    ports.set(name, port);
    const started = await startService(name, envOf(name), {
      port,
      ...(options.echo ? { echo: options.echo } : {}),
      ...(options.detached ? { detached: true } : {}),
    });
    running.set(name, started);
    return started;
  };
  const stop = async () => {
    for (const name of [...chosen].reverse()) await running.get(name)?.stop();
    running.clear();
  };
  try {
    for (const name of chosen) await start(name);
  } catch (err) {
    await stop();
    throw err;
  }
  const get = (name: ServiceName) => {
    const p = running.get(name);
    if (!p) throw new Error(`${name} is not running in this stack`);
    return p;
  };
  return {
    redisUrl: options.redisUrl,
    prefix: options.prefix,
    get,
    url: (name) => get(name).url,
    processes: () => chosen.flatMap((n) => running.get(n) ?? []),
    async restart(name, restartOptions = {}) {
      await get(name).stop(restartOptions.signal ?? 'SIGTERM');
      running.delete(name);
      if (restartOptions.afterMs) await new Promise((r) => setTimeout(r, restartOptions.afterMs));
      return start(name);
    },
    stop,
  };
}
