/**
 * The fault-injecting receiver in a process of its own (so that the CPU it uses is its own, apart
 * from the load generator's), driven over IPC; and the small IPC helpers it and the benches'
 * helper processes use: a call is answered `{ type: 'reply', id, body | error }`, any other
 * message from the child is an event. Run as `node dist/chaos-process.js '<options JSON>'`.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { startChaosReceiver, type Arrival, type ChaosPlan, type ChaosReceiver } from './chaos.js';
import { startChild } from './process.js';

type Message = { type: string } & Record<string, unknown>;

/** The parent's side of the IPC channel to a child. */
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
      if (typeof msg['error'] === 'string') w?.reject(new Error(`${name}: ${msg['error']}`));
      else w?.resolve(msg['body']);
    });
    child.once('exit', () => this.waiting.forEach((w) => w.reject(new Error(`${name} exited`))));
  }

  /** The caller states the shape of the answer it relies on. */
  call<T>(type: string, args: Record<string, unknown> = {}, timeoutMs = 10_000): Promise<T> {
    const id = this.nextId++;
    let timer: NodeJS.Timeout | undefined;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      timer = setTimeout(() => reject(new Error(`${this.name}: no answer to "${type}" within ${timeoutMs} ms`)), timeoutMs);
      this.child.send({ ...args, id, type }, (err) => err && reject(err));
    }).finally(() => (clearTimeout(timer), this.waiting.delete(id)));
  }
}

/** In a child: answers the parent's calls with `handler`'s result (or its error); the parent going away ends the child. */
export function serveIpc(handler: (msg: Message) => unknown): void {
  process.on('message', (msg: Message) => {
    const reply = (answer: { body?: unknown; error?: string }) => process.send?.({ type: 'reply', id: msg['id'], ...answer });
    Promise.resolve()
      .then(() => handler(msg))
      .then(
        (body) => reply({ body }),
        (err: unknown) => reply({ error: err instanceof Error ? err.message : String(err) }),
      );
  });
  process.on('disconnect', () => process.exit(0));
}

export interface ChaosProcess extends Pick<ChaosReceiver, 'urls' | 'httpsUrl'> {
  readonly pid: number | undefined;
  setPlan(plan: ChaosPlan): Promise<void>;
  down(i: number): Promise<void>;
  up(i: number): Promise<void>;
  /** Hands every record since the last pull to `sink`. */
  pull(sink: (a: Arrival) => void): Promise<void>;
  stats(): Promise<ReturnType<ChaosReceiver['stats']>>;
  /** `listener` gets the count of 2xx answers per route each time it changes (pushed every 10 ms). */
  onDelivered(listener: (byRoute: Readonly<Record<string, number>>) => void): void;
  /** The latest 2xx count over `routes`. */
  deliveredOn(routes: readonly string[]): number;
  stop(): Promise<unknown>;
}

/** startChaosReceiver in a child process (the built dist/chaos-process.js: run `tsc -b` first). */
export async function startChaosProcess(o: { listeners: number; secret?: string; echo?: 'raw' | 'prefixed' }): Promise<ChaosProcess> {
  let urls: Pick<ChaosReceiver, 'urls' | 'httpsUrl'> | undefined;
  let latest: Readonly<Record<string, number>> = {};
  let onDelivered: (byRoute: Readonly<Record<string, number>>) => void = () => undefined;
  let ipc: IpcClient | undefined;
  const handle = await startChild({
    name: 'chaos-receiver',
    args: [path.resolve(__dirname, '..', 'dist', 'chaos-process.js'), JSON.stringify({ listeners: o.listeners, secret: o.secret })],
    ipc: true,
    ...(o.echo ? { echo: o.echo } : {}),
    ready: (h) => {
      ipc ??= new IpcClient(h.child, 'chaos-receiver', (msg) => {
        if (msg.type === 'ready') urls = msg['urls'] as typeof urls;
        if (msg.type === 'delivered') onDelivered((latest = msg['byRoute'] as Record<string, number>));
      });
      return Promise.resolve(urls !== undefined);
    },
  });
  const client = ipc as IpcClient;
  // One pull at a time, each in pages of at most 50,000 records (one IPC message stays a few megabytes).
  let pulling: Promise<unknown> = Promise.resolve();
  const pullAll = async (sink: (a: Arrival) => void) => {
    for (;;) {
      const page = await client.call<Arrival[]>('drain', { args: [50_000] }, 30_000);
      // JSON carries a missing sentAtMs (NaN) as null.
      for (const a of page) sink({ ...a, sentAtMs: a.sentAtMs ?? NaN });
      if (page.length < 50_000) return;
    }
  };
  return {
    ...(urls as NonNullable<typeof urls>),
    pid: handle.pid,
    setPlan: (plan) => client.call('setPlan', { args: [plan] }),
    down: (i) => client.call('down', { args: [i] }),
    up: (i) => client.call('up', { args: [i] }),
    pull(sink) {
      const run = pulling.then(() => pullAll(sink));
      pulling = run.catch(() => undefined);
      return run;
    },
    stats: () => client.call('stats'),
    onDelivered: (l) => void (onDelivered = l),
    deliveredOn: (routes) => routes.reduce((n, r) => n + (latest[r] ?? 0), 0),
    stop: () => handle.stop(),
  };
}

if (require.main === module) {
  void (async () => {
    const rx = await startChaosReceiver(JSON.parse(process.argv[2] ?? '{}') as { listeners: number; secret?: string });
    serveIpc((msg) => {
      const [arg] = (msg['args'] as unknown[] | undefined) ?? [];
      if (msg.type === 'drain') return rx.drain(arg as number);
      if (msg.type === 'setPlan') return rx.setPlan(arg as ChaosPlan);
      if (msg.type === 'down' || msg.type === 'up') return rx[msg.type](arg as number);
      if (msg.type === 'stats') return rx.stats();
      throw new Error(`unknown call "${msg.type}"`);
    });
    // Nothing delivered yet is nothing to push.
    let pushed = '{}';
    setInterval(() => {
      const byRoute = JSON.stringify(Object.fromEntries(rx.delivered));
      if (byRoute !== pushed) process.send?.({ type: 'delivered', byRoute: JSON.parse((pushed = byRoute)) as unknown });
    }, 10).unref();
    process.send?.({ type: 'ready', urls: { urls: rx.urls, httpsUrl: rx.httpsUrl } });
    const stop = () => void rx.close().then(() => process.exit(0));
    process.on('SIGTERM', stop).on('SIGINT', stop);
  })();
}
