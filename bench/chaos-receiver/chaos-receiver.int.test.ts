/**
 * The chaos receiver as the bench runs it: a child process with an IPC channel, two HTTP
 * listeners and an HTTPS one, a plan file and a shared secret, hit by real node:http(s) clients.
 * Each behaviour is checked from both sides: what the client saw, and the record the receiver kept.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signBody } from '@eventrelay/config';
import { eventually, startChild, type ChildHandle } from '@eventrelay/testkit';
import { IpcClient } from '../lib/receiver';
import { chooseAction, DEFAULT_LOCATION, routeRandom, type ChaosPlan } from './behaviour';
import type { ChaosStats } from './chaos';
import type { RecordSlice, RequestRecord } from './records';

const ROOT = path.resolve(__dirname, '../..');
const MAIN = path.join(__dirname, 'main.ts');
const SECRET = 'chaos-test-secret';

const PLAN: ChaosPlan = {
  seed: 7,
  routes: {
    ok: {},
    f500: { fail500: 1 },
    f429: { fail429: 1 },
    hang: { hang: 1 },
    reset: { reset: 1 },
    redir: { redirect: 1 },
    slow: { slowBodyMs: 800 },
    delay: { delayMs: 300 },
  },
};

interface Ports {
  readonly http: number[];
  readonly https: number | null;
}
type Stats = ChaosStats & { listeners: { port: number; up: boolean }[] };
type Records = { slice: RecordSlice; next: number; total: number };

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** ms from sending to the response headers, and to the end of the body. */
  readonly headersMs: number;
  readonly endMs: number;
}

interface SendOptions {
  readonly port: number;
  readonly path: string;
  readonly body?: string;
  readonly headers?: Record<string, string>;
  /** Give up (destroy the socket) after this long without a complete answer. */
  readonly timeoutMs?: number;
  /** HTTPS with these options. */
  readonly tls?: https.RequestOptions;
  readonly agent?: http.Agent;
}

/** One POST; rejects with the transport error (code ECONNRESET, ECONNREFUSED, CLIENT_TIMEOUT …). */
function send(o: SendOptions): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const body = o.body ?? '{}';
    const options: http.RequestOptions = {
      host: '127.0.0.1',
      port: o.port,
      method: 'POST',
      path: o.path,
      agent: o.agent ?? false,
      headers: { 'content-type': 'application/json', ...o.headers },
    };
    const onResponse = (res: http.IncomingMessage) => {
      const headersMs = performance.now() - started;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, headersMs, endMs: performance.now() - started });
      });
      res.on('error', reject);
    };
    const req = o.tls ? https.request({ ...options, ...o.tls }, onResponse) : http.request(options, onResponse);
    const timer = setTimeout(
      () => req.destroy(Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' })),
      o.timeoutMs ?? 5000,
    );
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(body);
  });
}

const sign = (body: string) => signBody(SECRET, body);
const trackBody = (sentAtMs: number) => JSON.stringify({ type: 'track', event: 'Order Completed', properties: { sentAtMs, total: 12.5 } });
/** How a request failed ('answered' if it did not); take it at once, so the rejection is never unhandled. */
const failure = (p: Promise<unknown>) =>
  p.then(
    () => ({ code: 'answered', message: '' }),
    (err: NodeJS.ErrnoException) => ({ code: err.code ?? '', message: err.message }),
  );
const errorCode = async (p: Promise<unknown>) => (await failure(p)).code;

let seq = 0;
/** A signed track call with a fresh message id. */
function call(
  port: number,
  route: string,
  extra: Partial<SendOptions> = {},
  attempt = 1,
): { id: string; sentAtMs: number; answer: Promise<Answer> } {
  const id = `msg-${route}-${++seq}`;
  const sentAtMs = performance.timeOrigin + performance.now();
  const body = trackBody(sentAtMs);
  const headers = { 'x-signature': sign(body), 'x-eventrelay-message-id': id, 'x-eventrelay-attempt': String(attempt) };
  return { id, sentAtMs, answer: send({ port, path: `/${route}/hook`, body, headers, ...extra }) };
}

describe('chaos receiver process', () => {
  let dir: string;
  let child: ChildHandle;
  let ipc: IpcClient | undefined;
  let ports: Ports | undefined;
  const delivered: { total: number; byRoute: Record<string, number> }[] = [];

  const rx = () => ipc!;
  const httpPort = (i: number) => ports!.http[i]!;
  const stats = () => rx().call<Stats>('stats');
  const allRecords = () => rx().call<Records>('records', { from: 0, max: 100_000 });
  /** The record of a message id, once it is final. */
  const recordOf = (id: string) =>
    eventually(async () => {
      const r = (await allRecords()).slice;
      const i = r.messageId.indexOf(id);
      expect(i).toBeGreaterThanOrEqual(0);
      const rec: RequestRecord = {
        arrivalMs: r.arrivalMs[i]!,
        route: r.route[i]!,
        messageId: id,
        attempt: r.attempt[i]!,
        sentAtMs: r.sentAtMs[i] ?? NaN,
        status: r.status[i]!,
        signature: r.signature[i]!,
        tls: r.tls[i]!,
      };
      return rec;
    }, 5000);

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'chaos-receiver-test-'));
    const planFile = path.join(dir, 'plan.json');
    writeFileSync(planFile, JSON.stringify(PLAN));
    child = await startChild({
      name: 'chaos-receiver',
      args: ['--import', 'tsx', MAIN],
      env: { ...process.env, CHAOS_LISTENERS: '2', CHAOS_TLS: '1', CHAOS_PLAN: planFile, SHARED_SECRET: SECRET },
      cwd: ROOT,
      ipc: true,
      readyTimeoutMs: 20_000,
      ready: (h) => {
        // Attached on the first poll, in the tick that spawned the child: no event is missed.
        ipc ??= new IpcClient(h.child, 'chaos-receiver', (msg) => {
          if (msg.type === 'listening') ports = { http: msg['http'] as number[], https: msg['https'] as number | null };
          if (msg.type === 'delivered')
            delivered.push({ total: msg['total'] as number, byRoute: msg['byRoute'] as Record<string, number> });
        });
        return Promise.resolve(ports !== undefined);
      },
    });
  });

  afterAll(async () => {
    await child?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reports its ports over IPC as in the listening event, and answers /healthz on each', async () => {
    const answer = await rx().call<Ports>('ports');
    expect(answer).toEqual(ports);
    expect(answer.http).toHaveLength(2);
    expect(new Set(answer.http).size).toBe(2);
    expect(answer.https).toEqual(expect.any(Number));
    for (const port of answer.http) {
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (r) => {
            let body = '';
            r.on('data', (c: Buffer) => (body += c.toString()));
            r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
          })
          .on('error', reject);
      });
      expect(res).toEqual({ status: 200, body: 'ok' });
    }
  });

  it('answers 200 to a plain route and records message id, attempt, sentAtMs, status and a good signature', async () => {
    const c = call(httpPort(0), 'ok', {}, 3);
    const answer = await c.answer;
    expect(answer.status).toBe(200);
    expect(answer.headers['content-length']).toBe('0');
    const rec = await recordOf(c.id);
    expect(rec).toMatchObject({ route: 'ok', attempt: 3, sentAtMs: c.sentAtMs, status: 200, signature: 'ok', tls: false });
    expect(rec.arrivalMs).toBeGreaterThanOrEqual(c.sentAtMs);
    expect(rec.arrivalMs - c.sentAtMs).toBeLessThan(2000);
  });

  it('tells a good, a wrong and a missing signature apart', async () => {
    const before = await stats();
    const body = trackBody(1);
    const good = await send({
      port: httpPort(0),
      path: '/ok',
      body,
      headers: { 'x-signature': sign(body), 'x-eventrelay-message-id': 'sig-good' },
    });
    const bad = await send({
      port: httpPort(0),
      path: '/ok',
      body,
      headers: { 'x-signature': sign(`${body} `), 'x-eventrelay-message-id': 'sig-bad' },
    });
    const none = await send({ port: httpPort(0), path: '/ok', body, headers: { 'x-eventrelay-message-id': 'sig-none' } });
    // The receiver reports; it does not refuse: the bench counts bad signatures afterwards.
    expect([good.status, bad.status, none.status]).toEqual([200, 200, 200]);
    expect((await recordOf('sig-good')).signature).toBe('ok');
    expect((await recordOf('sig-bad')).signature).toBe('bad');
    expect((await recordOf('sig-none')).signature).toBe('unsigned');
    const after = await stats();
    expect(after.badSignatures - before.badSignatures).toBe(1);
    expect(after.unsigned - before.unsigned).toBe(1);
    expect(after.signatures.ok - before.signatures.ok).toBe(1);
  });

  it('records a request without the delivery headers or a timestamp with empty values', async () => {
    await send({ port: httpPort(0), path: '/ok', body: '{"type":"identify"}', headers: { 'x-signature': sign('{"type":"identify"}') } });
    const r = await eventually(async () => {
      const all = (await allRecords()).slice;
      const i = all.messageId.lastIndexOf('');
      expect(i).toBeGreaterThanOrEqual(0);
      return { attempt: all.attempt[i], sentAtMs: all.sentAtMs[i], status: all.status[i] };
    });
    expect(r).toEqual({ attempt: 0, sentAtMs: null, status: 200 });
  });

  it('answers 500 on a fail500=1 route', async () => {
    const c = call(httpPort(0), 'f500');
    expect((await c.answer).status).toBe(500);
    expect((await recordOf(c.id)).status).toBe(500);
  });

  it('answers 429 with Retry-After: 1 on a fail429=1 route', async () => {
    const c = call(httpPort(0), 'f429');
    const answer = await c.answer;
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('1');
    expect((await recordOf(c.id)).status).toBe(429);
  });

  it('never answers a hang=1 route, and records status 0 once the client gives up', async () => {
    const before = await stats();
    const c = call(httpPort(0), 'hang', { timeoutMs: 500 });
    expect(await errorCode(c.answer)).toBe('CLIENT_TIMEOUT');
    expect((await recordOf(c.id)).status).toBe(0);
    const after = await stats();
    expect(after.byAction.hang - before.byAction.hang).toBe(1);
    expect(after.delivered).toBe(before.delivered);
  });

  it('resets the connection on a reset=1 route', async () => {
    const c = call(httpPort(0), 'reset');
    // "read ECONNRESET": a TCP RST, not the "socket hang up" of a connection closed politely.
    expect(await failure(c.answer)).toEqual({ code: 'ECONNRESET', message: 'read ECONNRESET' });
    expect((await recordOf(c.id)).status).toBe(0);
  });

  it('redirects a redirect=1 route to the cloud metadata address', async () => {
    const c = call(httpPort(0), 'redir');
    const answer = await c.answer;
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe(DEFAULT_LOCATION);
    expect((await recordOf(c.id)).status).toBe(302);
  });

  it('sends the headers of a slowBodyMs=800 answer at once and ends the body after 800 ms', async () => {
    const c = call(httpPort(0), 'slow');
    const answer = await c.answer;
    expect(answer.status).toBe(200);
    expect(answer.headersMs).toBeLessThan(400);
    expect(answer.endMs).toBeGreaterThanOrEqual(790);
    expect(answer.body.length).toBeGreaterThan(0);
    expect((await recordOf(c.id)).status).toBe(200);
  });

  it('records status 0 for a slow body the client abandons, and does not count it delivered', async () => {
    const before = await stats();
    const c = call(httpPort(0), 'slow', { timeoutMs: 300 });
    expect(await errorCode(c.answer)).toBe('CLIENT_TIMEOUT');
    expect((await recordOf(c.id)).status).toBe(0);
    expect((await stats()).delivered).toBe(before.delivered);
  });

  it('waits delayMs=300 before answering', async () => {
    const c = call(httpPort(0), 'delay');
    const answer = await c.answer;
    expect(answer.status).toBe(200);
    expect(answer.headersMs).toBeGreaterThanOrEqual(290);
  });

  it('serves the path form without a plan entry, and answers 400 naming the field for a bad one', async () => {
    const c = call(httpPort(0), 'chaos/fail429=1,retryAfterS=4');
    const answer = await c.answer;
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('4');
    expect((await recordOf(c.id)).route).toBe('chaos/fail429=1,retryAfterS=4');
    const bad = await send({ port: httpPort(0), path: '/chaos/fail500=2/hook' });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('fail500 must be a number between 0 and 1');
  });

  it('fails the seeded share of a fail500=0.5 route: exactly the count its stream gives', async () => {
    const seed = 99;
    const swapped = await rx().call<{ routes: string[]; seed: number }>('plan', {
      plan: { ...PLAN, seed, routes: { ...PLAN.routes, half: { fail500: 0.5 } } },
    });
    expect(swapped).toEqual({ routes: [...Object.keys(PLAN.routes), 'half'], seed });
    const next = routeRandom(seed, 'half');
    let expected = 0;
    for (let i = 0; i < 200; i++) if (chooseAction({ fail500: 0.5 }, next()).kind === 'status') expected++;

    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let fails = 0;
    try {
      for (let i = 0; i < 200; i++) if ((await send({ port: httpPort(0), path: '/half/hook', agent })).status === 500) fails++;
    } finally {
      agent.destroy();
    }
    expect(fails).toBe(expected);
    expect(fails).toBeGreaterThan(70);
    expect(fails).toBeLessThan(130);
    await rx().call('plan', { plan: PLAN });
  });

  it('refuses an invalid plan over IPC with an error naming the field, keeping the old one', async () => {
    await expect(rx().call('plan', { plan: { routes: { d3: { fail500: 1.5 } } } })).rejects.toThrow(
      'routes.d3.fail500 must be a number between 0 and 1',
    );
    await expect(rx().call('plan', { plan: { routes: {}, sede: 1 } })).rejects.toThrow('plan.sede is not a known field');
    expect((await call(httpPort(0), 'f500').answer).status).toBe(500);
  });

  it('pushes delivered counts per route while they change', async () => {
    const total = (await stats()).delivered;
    await eventually(() => {
      const last = delivered[delivered.length - 1];
      expect(last?.total).toBe(total);
      expect(last?.byRoute['ok']).toBeGreaterThanOrEqual(5);
      expect(last?.byRoute['half']).toBeGreaterThan(50);
      expect(last?.byRoute['f500']).toBeUndefined();
    }, 2000);
  });

  it('pages records with next and total', async () => {
    const first = await rx().call<Records>('records', { from: 0, max: 3 });
    expect(first.slice.from).toBe(0);
    expect(first.slice.status).toHaveLength(3);
    expect(first.next).toBe(3);
    const rest = await rx().call<Records>('records', { from: first.next, max: 100_000 });
    expect(rest.slice.from).toBe(3);
    expect(rest.next).toBe(first.total);
    expect(3 + rest.slice.status.length).toBe(first.total);
    expect(first.total).toBe((await stats()).recorded);
    await expect(rx().call('records', { from: -1, max: 1 })).rejects.toThrow('from must be a whole number');
  });

  it('writes records in completion order: a slow answer after a quick one that arrived later', async () => {
    const slow = call(httpPort(0), 'slow');
    const slowAnswer = failure(slow.answer);
    await eventually(async () => expect((await stats()).inFlight).toBeGreaterThanOrEqual(1), 2000);
    const quick = call(httpPort(0), 'ok');
    expect((await quick.answer).status).toBe(200);
    expect(await slowAnswer).toEqual({ code: 'answered', message: '' });
    const all = (await allRecords()).slice;
    const slowAt = all.messageId.indexOf(slow.id);
    const quickAt = all.messageId.indexOf(quick.id);
    expect(quickAt).toBeGreaterThanOrEqual(0);
    expect(slowAt).toBeGreaterThan(quickAt);
    // Arrival time is when the body was read, not when the record was written.
    expect(all.arrivalMs[slowAt]!).toBeLessThan(all.arrivalMs[quickAt]!);
  });

  it('on HTTPS: a verifying client refuses the self-signed certificate (a TLS client error, no request); a non-verifying one is answered', async () => {
    const port = ports!.https!;
    const before = await stats();
    expect(await errorCode(call(port, 'ok', { tls: {} }).answer)).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    await eventually(async () => expect((await stats()).tlsClientErrors - before.tlsClientErrors).toBe(1), 2000);
    expect((await stats()).tlsRequests).toBe(0);

    const c = call(port, 'ok', { tls: { rejectUnauthorized: false } });
    expect((await c.answer).status).toBe(200);
    expect(await recordOf(c.id)).toMatchObject({ tls: true, signature: 'ok', status: 200 });
    const after = await stats();
    expect(after.tlsRequests).toBe(1);
    expect(after.tlsHandshakes).toBeGreaterThanOrEqual(1);
  });

  it('takes a listener down (open sockets destroyed, connections refused) and back up on the same port', async () => {
    const port = httpPort(1);
    const hung = call(port, 'hang', { timeoutMs: 5000 });
    const hungFailure = errorCode(hung.answer);
    await eventually(async () => expect((await stats()).inFlight).toBeGreaterThanOrEqual(1), 2000);

    expect(await rx().call('down', { listener: 1 })).toEqual({ listener: 1, port, up: false });
    expect(await hungFailure).toBe('ECONNRESET');
    expect((await recordOf(hung.id)).status).toBe(0);
    expect(await errorCode(call(port, 'ok').answer)).toBe('ECONNREFUSED');
    // The other listener is untouched.
    expect((await call(httpPort(0), 'ok').answer).status).toBe(200);
    expect((await stats()).listeners).toEqual([
      { port: httpPort(0), up: true },
      { port, up: false },
    ]);

    expect(await rx().call('up', { listener: 1 })).toEqual({ listener: 1, port, up: true });
    expect((await call(port, 'ok').answer).status).toBe(200);
    await expect(rx().call('down', { listener: 2 })).rejects.toThrow('listener must be an HTTP listener index between 0 and 1');
  });

  it('on SIGTERM releases a hung request and exits 0', async () => {
    const hung = call(httpPort(0), 'hang', { timeoutMs: 5000 });
    const hungFailure = errorCode(hung.answer);
    await eventually(async () => expect((await stats()).inFlight).toBeGreaterThanOrEqual(1), 2000);
    const started = Date.now();
    await child.stop();
    expect(child.child.exitCode).toBe(0);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await hungFailure).toBe('ECONNRESET');
  });
});

describe('chaos receiver environment', () => {
  it('exits 1 naming the variable for a bad value', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', MAIN], {
      cwd: ROOT,
      env: { ...process.env, CHAOS_LISTENERS: 'two' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('CHAOS_LISTENERS must be a whole number between 1 and 256, got "two"');
  });
});
