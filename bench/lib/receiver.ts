/**
 * The bench's side of the fault-injecting receiver, which runs in a process of its own: the IPC
 * calls to it (and to the baseline producer), its handle, and what one run's receivers got,
 * gathered from its arrival records as the run goes.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { startChild } from '@eventrelay/testkit';
import type { ChaosPlan } from '../chaos-receiver/behaviour.js';
import type { RecordSlice } from '../chaos-receiver/records.js';
import { BENCH_DIR } from './report.js';

type Message = { type: string } & Record<string, unknown>;

/** Request/response over a child's IPC channel: the child answers `{ type: 'reply', id, body | error }`; any other message is an event. */
export class IpcClient {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(body: unknown): void; reject(err: Error): void }>();

  constructor(
    private readonly child: ChildProcess,
    private readonly name: string,
    onEvent: (msg: Message) => void = () => undefined,
  ) {
    child.on('message', (msg: Message) => {
      if (msg.type !== 'reply') return onEvent(msg);
      const w = this.waiting.get(msg['id'] as number);
      this.waiting.delete(msg['id'] as number);
      if (typeof msg['error'] === 'string') w?.reject(new Error(`${name}: ${msg['error']}`));
      else w?.resolve(msg['body']);
    });
    child.once('exit', () => {
      for (const w of this.waiting.values()) w.reject(new Error(`${name} exited`));
      this.waiting.clear();
    });
  }

  /** The caller states the shape of the answer it relies on. */
  call<T>(type: string, args: Record<string, unknown> = {}, timeoutMs = 10_000): Promise<T> {
    const id = this.nextId++;
    const answer = new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.send({ ...args, id, type }, (err) => err && reject(err));
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${this.name}: no answer to "${type}" within ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([answer, timeout]).finally(() => (clearTimeout(timer), this.waiting.delete(id)));
  }
}

/** In a child: answers the parent's calls with `handler`'s result (or its error); the parent going away ends the child. */
export function serveIpc(handler: (msg: Message) => unknown): void {
  process.on('message', (msg: Message) => {
    Promise.resolve()
      .then(() => handler(msg))
      .then(
        (body) => process.send?.({ type: 'reply', id: msg['id'], body }),
        (err: unknown) => process.send?.({ type: 'reply', id: msg['id'], error: err instanceof Error ? err.message : String(err) }),
      );
  });
  process.on('disconnect', () => process.exit(0));
}

/** One request as the receiver recorded it; status 0 when it was hung, reset or abandoned. */
export interface Arrival {
  readonly route: string;
  readonly messageId: string;
  readonly arrivalMs: number;
  /** From the call's properties.sentAtMs; NaN when absent. */
  readonly sentAtMs: number;
  readonly attempt: number;
  readonly status: number;
}

export interface ChaosReceiver {
  readonly pid: number | undefined;
  /** Base URL of listener i, and of the https listener (self-signed). */
  urlOf(i: number): string;
  httpsUrl(): string;
  setPlan(plan: ChaosPlan): Promise<void>;
  down(listener: number): Promise<void>;
  up(listener: number): Promise<void>;
  /** Hands every record since the last pull to `sink`. */
  pull(sink: (a: Arrival) => void): Promise<void>;
  stats(): Promise<{ badSignatures: number; unsigned: number; tlsRequests: number; tlsClientErrors: number }>;
  /** `listener` gets the count of 2xx answers per route each time it changes (pushed every 10 ms). */
  onDelivered(listener: (byRoute: Readonly<Record<string, number>>) => void): void;
  /** The latest 2xx count over `routes`. */
  deliveredOn(routes: readonly string[]): number;
  stop(): Promise<unknown>;
}

/** The fault-injecting receiver in its own process: one HTTP listener per destination and an https one. */
export async function startChaosReceiver(o: { listeners: number; secret: string }): Promise<ChaosReceiver> {
  let ports: { http: number[]; https: number | null } | undefined;
  let latest: Readonly<Record<string, number>> = {};
  let onDelivered: (byRoute: Readonly<Record<string, number>>) => void = () => undefined;
  let ipc: IpcClient | undefined;
  const handle = await startChild({
    name: 'chaos-receiver',
    args: ['--import', 'tsx', path.join(BENCH_DIR, 'chaos-receiver', 'main.ts')],
    cwd: BENCH_DIR,
    echo: 'prefixed',
    env: { ...process.env, CHAOS_LISTENERS: String(o.listeners), SHARED_SECRET: o.secret, CHAOS_TLS: '1', NODE_ENV: 'production' },
    ipc: true,
    ready: async (h) => {
      ipc ??= new IpcClient(h.child, 'chaos-receiver', (msg) => {
        if (msg.type === 'delivered') onDelivered((latest = msg['byRoute'] as Record<string, number>));
      });
      ports = await ipc.call<typeof ports>('ports', {}, 1000).catch(() => undefined);
      return ports?.http.length === o.listeners;
    },
  });
  const client = ipc as IpcClient;
  const { http, https } = ports as NonNullable<typeof ports>;
  let next = 0;
  // One pull at a time: two overlapping pulls would read the same records.
  let pulling: Promise<unknown> = Promise.resolve();
  const pullNow = async (sink: (a: Arrival) => void) => {
    for (let total = Infinity; next < total;) {
      const got = await client.call<{ slice: RecordSlice; next: number; total: number }>('records', { from: next, max: 50_000 }, 30_000);
      const s = got.slice;
      for (let i = 0; i < s.status.length; i++) {
        const [route, messageId, arrivalMs, attempt, status] = [s.route[i], s.messageId[i], s.arrivalMs[i], s.attempt[i], s.status[i]];
        sink({ route, messageId, arrivalMs, attempt, status, sentAtMs: s.sentAtMs[i] ?? NaN } as Arrival);
      }
      [next, total] = [got.next, got.total];
    }
  };
  return {
    pid: handle.pid,
    urlOf: (i) => `http://127.0.0.1:${http[i] ?? NaN}`,
    httpsUrl: () => `https://127.0.0.1:${https ?? NaN}`,
    setPlan: (plan) => client.call('plan', { plan }),
    down: (i) => client.call('down', { listener: i }),
    up: (i) => client.call('up', { listener: i }),
    pull(sink) {
      const run = pulling.then(() => pullNow(sink));
      pulling = run.catch(() => undefined);
      return run;
    },
    stats: () => client.call('stats'),
    onDelivered: (l) => void (onDelivered = l),
    deliveredOn: (routes) => routes.reduce((n, r) => n + (latest[r] ?? 0), 0),
    stop: () => handle.stop(),
  };
}

/**
 * What one run's receivers got: per route, how often each call was answered 2xx, when it first
 * arrived and how long after the load generator sent it, and every attempt's answer. Other routes'
 * traffic (a baseline's, a late hung request of an earlier run) is not this run's and is ignored.
 */
export class Arrivals {
  private readonly routes = new Map<string, { delivered: Map<string, number>; first: Arrival[] }>();
  /** Every request recorded, by the status answered ("0" = no answer). */
  readonly statuses: Record<string, number> = {};
  requests = 0;
  /** The first 20 calls answered 2xx more than once, with each 2xx's attempt and arrival, to tell why. */
  readonly duplicateExamples: { route: string; messageId: string; answers: { attempt: number; arrivalMs: number }[] }[] = [];

  constructor(private readonly routeNames: readonly string[]) {
    for (const r of routeNames) this.routes.set(r, { delivered: new Map(), first: [] });
  }

  add(a: Arrival): void {
    const log = this.routes.get(a.route);
    if (!log) return;
    this.requests++;
    this.statuses[a.status] = (this.statuses[a.status] ?? 0) + 1;
    if (a.status < 200 || a.status >= 300) return;
    const times = log.delivered.get(a.messageId) ?? 0;
    log.delivered.set(a.messageId, times + 1);
    if (times === 0) return void log.first.push(a);
    const answer = { attempt: a.attempt, arrivalMs: a.arrivalMs };
    const known = this.duplicateExamples.find((d) => d.route === a.route && d.messageId === a.messageId);
    if (known) known.answers.push(answer);
    else if (this.duplicateExamples.length < 20) {
      const first = log.first.find((f) => f.messageId === a.messageId) as Arrival;
      this.duplicateExamples.push({
        route: a.route,
        messageId: a.messageId,
        answers: [{ attempt: first.attempt, arrivalMs: first.arrivalMs }, answer],
      });
    }
  }

  /** First 2xx arrivals of `routes` (all by default). */
  firsts(routes: readonly string[] = this.routeNames): Arrival[] {
    return routes.flatMap((r) => this.routes.get(r)?.first ?? []);
  }

  /** Calls answered 2xx at least once. */
  deliveredCount(): number {
    return this.firsts().length;
  }

  /** First arrivals within [fromMs, toMs) over `routes`. */
  arrivalsBetween(fromMs: number, toMs: number, routes?: readonly string[]): number {
    return this.firsts(routes).filter((a) => a.arrivalMs >= fromMs && a.arrivalMs < toMs).length;
  }

  /** Latency (ms, first 2xx arrival - send) of the calls sent within [fromMs, toMs) over `routes`. */
  latenciesOfSentBetween(fromMs: number, toMs: number, routes?: readonly string[]): number[] {
    return this.firsts(routes)
      .filter((a) => a.sentAtMs >= fromMs && a.sentAtMs < toMs)
      .map((a) => a.arrivalMs - a.sentAtMs);
  }

  /** Per route: messageId → times answered 2xx (for the verification pass). */
  deliveredByRoute(): Map<string, ReadonlyMap<string, number>> {
    return new Map([...this.routes].map(([r, log]) => [r, log.delivered]));
  }

  /** How many calls needed 1, 2, 3, … attempts to their first 2xx. */
  attemptsToDeliver(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const a of this.firsts()) out[a.attempt] = (out[a.attempt] ?? 0) + 1;
    return out;
  }
}
