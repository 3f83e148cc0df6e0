/**
 * The bench's handle on the chaos receiver process (bench/chaos-receiver/main.ts): starts it with
 * one HTTP listener per destination, and wraps its IPC API (plan, down/up, records, stats).
 */
import path from 'node:path';
import type { ChaosPlan } from '../chaos-receiver/behaviour.js';
import type { RecordSlice } from '../chaos-receiver/records.js';
import type { Arrival } from './arrivals.js';
import { startChild, type ChildHandle } from '@eventrelay/testkit';
import { IpcClient } from './ipc.js';
import { BENCH_DIR } from './proc.js';

export interface ChaosReceiver {
  readonly pid: number | undefined;
  readonly ports: readonly number[];
  /** Base URL of listener i (no trailing slash). */
  urlOf(i: number): string;
  /** Base URL of the https listener (self-signed); throws when started without TLS. */
  httpsUrl(): string;
  setPlan(plan: ChaosPlan): Promise<void>;
  down(listener: number): Promise<void>;
  up(listener: number): Promise<void>;
  /** Hands every record since the last pull to `sink`; resolves with how many there were. */
  pull(sink: (a: Arrival) => void): Promise<number>;
  stats(): Promise<{ badSignatures: number; unsigned: number; tlsRequests: number; tlsClientErrors: number } & Record<string, unknown>>;
  /** Called with the 2xx count per route each time it changes (pushed every 10 ms). */
  onDelivered(listener: (byRoute: Readonly<Record<string, number>>) => void): void;
  /** The latest 2xx count over `routes`. */
  deliveredOn(routes: readonly string[]): number;
  stop(): Promise<void>;
}

const PULL_MAX = 50_000;

export async function startChaosReceiver(opts: { listeners: number; secret: string; tls?: boolean }): Promise<ChaosReceiver> {
  let ports: { http: number[]; https: number | null } | undefined;
  let latest: Readonly<Record<string, number>> = {};
  let listener: (byRoute: Readonly<Record<string, number>>) => void = () => undefined;
  let ipc: IpcClient | undefined;
  const handle: ChildHandle = await startChild({
    name: 'chaos-receiver',
    args: ['--import', 'tsx', path.join(BENCH_DIR, 'chaos-receiver', 'main.ts')],
    cwd: BENCH_DIR,
    echo: 'prefixed',
    env: {
      ...process.env,
      CHAOS_LISTENERS: String(opts.listeners),
      SHARED_SECRET: opts.secret,
      ...(opts.tls ? { CHAOS_TLS: '1' } : {}),
      NODE_ENV: 'production',
    },
    ipc: true,
    ready: async (h) => {
      ipc ??= new IpcClient(h.child, 'chaos-receiver', (msg) => {
        if (msg.type !== 'delivered') return;
        latest = msg['byRoute'] as Record<string, number>;
        listener(latest);
      });
      ports = await ipc.call<{ http: number[]; https: number | null }>('ports', {}, 1000).catch(() => undefined);
      return ports !== undefined && ports.http.length === opts.listeners;
    },
  });
  const client = ipc as IpcClient;
  const httpPorts = (ports as { http: number[] }).http;
  let next = 0;
  // One pull at a time: two overlapping pulls would read the same records from the same index.
  let pulling: Promise<unknown> = Promise.resolve();

  async function pullNow(sink: (a: Arrival) => void): Promise<number> {
    let n = 0;
    for (;;) {
      const got = await client.call<{ slice: RecordSlice; next: number; total: number }>('records', { from: next, max: PULL_MAX }, 30_000);
      const sl = got.slice;
      for (let i = 0; i < sl.arrivalMs.length; i++) {
        sink({
          route: sl.route[i] as string,
          messageId: sl.messageId[i] as string,
          arrivalMs: sl.arrivalMs[i] as number,
          sentAtMs: sl.sentAtMs[i] ?? NaN,
          attempt: sl.attempt[i] as number,
          status: sl.status[i] as number,
        });
      }
      n += sl.arrivalMs.length;
      next = got.next;
      if (next >= got.total) return n;
    }
  }

  return {
    pid: handle.child.pid,
    ports: httpPorts,
    urlOf: (i) => `http://127.0.0.1:${httpPorts[i] ?? NaN}`,
    httpsUrl() {
      const port = ports?.https;
      if (!port) throw new Error('the chaos receiver was started without CHAOS_TLS');
      return `https://127.0.0.1:${port}`;
    },
    setPlan: (plan) => client.call('plan', { plan }).then(() => undefined),
    down: (i) => client.call('down', { listener: i }).then(() => undefined),
    up: (i) => client.call('up', { listener: i }).then(() => undefined),
    pull(sink) {
      const run = pulling.then(() => pullNow(sink));
      pulling = run.catch(() => undefined);
      return run;
    },
    stats: () => client.call('stats'),
    onDelivered(l) {
      listener = l;
    },
    deliveredOn: (routes) => routes.reduce((n, r) => n + (latest[r] ?? 0), 0),
    stop: () => handle.stop().then(() => undefined),
  };
}
