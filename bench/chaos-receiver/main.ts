/**
 * The chaos receiver: a fault-injecting webhook receiver process for the bench
 * (`node --import tsx bench/chaos-receiver/main.ts`, spawned with an IPC channel; it also runs by
 * hand without one). Every listener serves the same handler (chaos.ts); what each request gets is
 * decided by its path's route in the plan, or by the path itself (/chaos/<spec>/…), see behaviour.ts.
 * GET /healthz answers 200 "ok" on any listener and is not recorded.
 *
 * Env (checked in env.ts; a bad value exits 1 naming the variable):
 *   CHAOS_LISTENERS  plain HTTP listeners on 127.0.0.1, each on its own free port (default 1): one
 *                    per destination, so destinations do not share a client connection pool
 *   CHAOS_PORTS      comma-separated fixed ports instead (0 = free port)
 *   CHAOS_TLS=1      also one HTTPS listener, with a self-signed certificate made at start by openssl
 *   CHAOS_TLS_PORT   its fixed port (default: a free one)
 *   CHAOS_PLAN       path of a JSON plan file (default: no routes, every request answered 200)
 *   SHARED_SECRET    when set, every X-Signature is checked (HMAC-SHA1 hex of the body)
 *
 * IPC (bench/lib/ipc.ts; `listener` is the 0-based index of an HTTP listener):
 *   ports                       → { http: number[], https: number | null }
 *   plan    { plan: ChaosPlan } → { routes: string[], seed: number }   swapped in at once, streams reseeded;
 *                                 an invalid plan is an IPC error naming the field
 *   down    { listener }        → { listener, port, up: false }  stops accepting and destroys its open
 *                                 sockets (clients get refused / reset); hung requests there are recorded
 *   up      { listener }        → { listener, port, up: true }   listens again on the same port
 *   records { from?, max? }     → { slice: RecordSlice, next: number, total: number }  records
 *                                 [from, from + max) in completion order (see records.ts); from
 *                                 defaults to 0, max to 10,000 (at most 100,000); next = where to go on
 *   stats                       → ChaosStats & { listeners: { port, up }[], https: number | null }
 * Events:
 *   { type: 'listening', http: number[], https: number | null }        once, when every listener is up
 *   { type: 'delivered', total, byRoute: Record<string, number> }       every 10 ms while it changes;
 *                                 2xx answers that finished, in all and per route
 * SIGTERM / SIGINT: close every listener and connection (hung requests too) and exit 0. The parent
 * closing the IPC channel exits 0 as well.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serveIpc } from '../lib/receiver.js';

type IpcRequest = { type: string } & Record<string, unknown>;
const emitIpc = (msg: IpcRequest) => process.send?.(msg);
import { DEFAULT_SEED, parsePlan } from './behaviour.js';
import { ChaosReceiver } from './chaos.js';
import { loadChaosEnv, type ChaosEnv } from './env.js';

const HOST = '127.0.0.1';
/** Longer than any sender's idle keep-alive, so the receiver is never the side that drops a pooled connection. */
const KEEP_ALIVE_MS = 65_000;
const RECORDS_DEFAULT = 10_000;
/** One IPC message stays a few megabytes at most. */
const RECORDS_MAX = 100_000;

interface Listener {
  readonly server: http.Server;
  port: number;
  up: boolean;
  /** Serialises down/up on this listener. */
  busy: Promise<void>;
}

function fail(message: string): never {
  process.stderr.write(`chaos-receiver: ${message}\n`);
  process.exit(1);
}

function selfSigned(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'chaos-receiver-'));
  try {
    // EC P-256: made in milliseconds, where RSA 2048 can take a second on a busy machine.
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-days',
        '1',
        '-keyout',
        'k',
        '-out',
        'c',
      ],
      { cwd: dir, stdio: 'pipe' },
    );
    return { key: readFileSync(path.join(dir, 'k'), 'utf8'), cert: readFileSync(path.join(dir, 'c'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function listen(server: http.Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function close(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // close() alone waits for busy connections, and a hung request is busy forever.
    server.closeAllConnections();
  });
}

function configure<S extends http.Server>(server: S): S {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  // A hung request must stay open until the client gives up, however long its timeout is.
  server.requestTimeout = 0;
  return server;
}

async function main(): Promise<void> {
  let env: ChaosEnv;
  try {
    env = loadChaosEnv(process.env, (file) => readFileSync(file, 'utf8'));
  } catch (err) {
    fail((err as Error).message);
  }
  const chaos = new ChaosReceiver(env.secret, env.plan);
  const listeners: Listener[] = [];
  let tlsServer: https.Server | null = null;
  let httpsPort: number | null = null;

  const ports = () => ({ http: listeners.map((l) => l.port), https: httpsPort });
  const listenerOf = (msg: Record<string, unknown>): Listener => {
    const i = msg['listener'];
    const l = typeof i === 'number' && Number.isInteger(i) ? listeners[i] : undefined;
    if (l === undefined)
      throw new Error(`listener must be an HTTP listener index between 0 and ${listeners.length - 1}, got ${JSON.stringify(i)}`);
    return l;
  };
  const switchListener = async (l: Listener, up: boolean) => {
    const run = l.busy.then(async () => {
      if (l.up === up) return;
      if (up) await listen(l.server, l.port);
      else await close(l.server);
      l.up = up;
    });
    // A failed `up` (port taken meanwhile) must not wedge later calls.
    l.busy = run.catch(() => undefined);
    await run;
    return { listener: listeners.indexOf(l), port: l.port, up: l.up };
  };

  const handle = async (msg: IpcRequest & Record<string, unknown>): Promise<unknown> => {
    switch (msg.type) {
      case 'ports':
        return ports();
      case 'plan': {
        const plan = parsePlan(msg['plan']);
        chaos.setPlan(plan);
        return { routes: Object.keys(plan.routes), seed: plan.seed ?? DEFAULT_SEED };
      }
      case 'down':
        return switchListener(listenerOf(msg), false);
      case 'up':
        return switchListener(listenerOf(msg), true);
      case 'records': {
        const from = msg['from'] ?? 0;
        const max = msg['max'] ?? RECORDS_DEFAULT;
        if (typeof from !== 'number' || !Number.isInteger(from) || from < 0)
          throw new Error(`from must be a whole number ≥ 0, got ${JSON.stringify(from)}`);
        if (typeof max !== 'number' || !Number.isInteger(max) || max < 0)
          throw new Error(`max must be a whole number ≥ 0, got ${JSON.stringify(max)}`);
        const slice = chaos.records.slice(from, Math.min(max, RECORDS_MAX));
        return { slice, next: slice.from + slice.status.length, total: chaos.records.length };
      }
      case 'stats':
        return { ...chaos.stats(), listeners: listeners.map((l) => ({ port: l.port, up: l.up })), https: httpsPort };
      default:
        throw new Error(`unknown request "${msg.type}"`);
    }
  };

  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  if (process.send) {
    // Served before the listeners open: a call that arrives meanwhile waits for them, not dropped.
    serveIpc(async (msg) => {
      await ready;
      return handle(msg);
    });
  }

  for (const wanted of env.httpPorts) {
    const server = configure(http.createServer(chaos.handleHttp));
    const port = await listen(server, wanted).catch((err: Error) =>
      fail(`CHAOS_PORTS: cannot listen on ${HOST}:${wanted}: ${err.message}`),
    );
    listeners.push({ server, port, up: true, busy: Promise.resolve() });
  }

  if (env.httpsPort !== null) {
    let pair: { key: string; cert: string };
    try {
      pair = selfSigned();
    } catch (err) {
      fail(`CHAOS_TLS: cannot make a self-signed certificate with openssl: ${(err as Error).message}`);
    }
    const server = configure(https.createServer(pair, chaos.handleHttps));
    server.on('secureConnection', () => chaos.tlsHandshakes++);
    server.on('tlsClientError', () => chaos.tlsClientErrors++);
    httpsPort = await listen(server, env.httpsPort).catch((err: Error) =>
      fail(`CHAOS_TLS_PORT: cannot listen on ${HOST}:${env.httpsPort}: ${err.message}`),
    );
    tlsServer = server;
  }

  markReady();
  if (process.send) {
    let pushed = -1;
    setInterval(() => {
      if (chaos.delivered === pushed) return;
      pushed = chaos.delivered;
      emitIpc({ type: 'delivered', total: pushed, byRoute: Object.fromEntries(chaos.deliveredByRoute) });
    }, 10).unref();
    emitIpc({ type: 'listening', ...ports() });
  }

  const plan =
    env.planFile === null
      ? 'none'
      : `${env.planFile} (${Object.keys(env.plan.routes).length} routes, seed ${env.plan.seed ?? DEFAULT_SEED})`;
  process.stdout.write(
    `chaos-receiver: http ${HOST}:${ports().http.join(',')} https ${httpsPort ?? 'off'} plan ${plan} secret ${env.secret === null ? 'unset' : 'set'}\n`,
  );

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    const servers: http.Server[] = [...listeners.filter((l) => l.up).map((l) => l.server), ...(tlsServer ? [tlsServer] : [])];
    void Promise.all(servers.map(close)).then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => fail(err instanceof Error ? (err.stack ?? err.message) : String(err)));
