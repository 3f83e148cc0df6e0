/**
 * The receiver's fault-injecting mode against real HTTP and HTTPS clients: every behaviour of a
 * plan, the seeded draws, the listeners going down and up, the arrival records and signature
 * counts, and the same receiver in a process of its own over IPC.
 */
import { execFileSync } from 'node:child_process';
import https from 'node:https';
import path from 'node:path';
import { signBody } from '@eventrelay/config';
import {
  METADATA_URL,
  REPO_ROOT,
  TokenBucket,
  chaosReply,
  routeRandom,
  startChaosProcess,
  startChaosReceiver,
  type Arrival,
  type Behaviour,
  type ChaosReceiver,
} from '@eventrelay/testkit';

const SECRET = 'whsec_chaos';
const body = (sentAtMs: number) => JSON.stringify({ batch: [{ type: 'track', properties: { sentAtMs } }] });
/** A signed POST; `signature: null` sends none. */
const post = (url: string, o: { signature?: string | null; timeoutMs?: number } = {}) => {
  const payload = body(1234.5);
  const signature: Record<string, string> = o.signature === null ? {} : { 'x-signature': o.signature ?? signBody(SECRET, payload) };
  const headers = { 'x-eventrelay-message-id': 'm-1', 'x-eventrelay-attempt': '2', ...signature };
  return fetch(url, { method: 'POST', body: payload, headers, redirect: 'manual', signal: AbortSignal.timeout(o.timeoutMs ?? 5000) });
};

let rx: ChaosReceiver;
beforeAll(async () => (rx = await startChaosReceiver({ listeners: 3, secret: SECRET })));
afterAll(() => rx.close());

// [route behaviour, status answered (undefined: no answer), headers, at least this many ms to the end of the body, recorded status]
const cases: [string, Behaviour, number | undefined, Record<string, string>, number, number][] = [
  ['2xx', {}, 200, {}, 0, 200],
  ['500', { fail500: 1 }, 500, {}, 0, 500],
  ['429 with Retry-After', { fail429: 1, retryAfterS: 3 }, 429, { 'retry-after': '3' }, 0, 429],
  ['redirect to the metadata address', { redirect: 1 }, 302, { location: METADATA_URL }, 0, 302],
  ['503, up but not serving', { unavailable: 1 }, 503, {}, 0, 503],
  ['answer after a delay', { delayMs: 300 }, 200, {}, 290, 200],
  ['body slower than the client', { slowBodyMs: 400 }, 200, {}, 390, 200],
  ['hang past the client timeout', { hang: 1 }, undefined, {}, 0, 0],
  ['connection reset', { reset: 1 }, undefined, {}, 0, 0],
];

describe('startChaosReceiver', () => {
  it.each(cases)('%s', async (_name, behaviour, status, headers, minMs, recorded) => {
    rx.setPlan({ routes: { d1: behaviour } });
    rx.drain();
    const began = performance.now();
    const res = await post(`${rx.urls[1]}/d1/hook`, { timeoutMs: 1000 }).then(
      async (r) => ({ r, text: await r.text() }),
      () => undefined,
    );
    expect(res?.r.status).toBe(status);
    for (const [k, v] of Object.entries(headers)) expect(res?.r.headers.get(k)).toBe(v);
    expect(performance.now() - began).toBeGreaterThanOrEqual(minMs);
    if (behaviour.slowBodyMs) expect(res?.text).toContain('chaos-slow');
    const wait = Date.now() + 3000;
    let records: Arrival[] = [];
    while (records.length === 0 && Date.now() < wait) records = (await new Promise((r) => setTimeout(r, 20)), rx.drain());
    expect(records).toEqual([
      { route: 'd1', messageId: 'm-1', attempt: 2, arrivalMs: expect.any(Number) as number, sentAtMs: 1234.5, status: recorded },
    ]);
  });

  it('draws each route from its own seeded stream, so a mix repeats', async () => {
    const mix: Behaviour = { fail500: 0.3, fail429: 0.2 };
    rx.setPlan({ seed: 7, routes: { '*': mix } });
    const statuses = [];
    for (let i = 0; i < 40; i++) statuses.push((await post(`${rx.urls[0]}/d5`)).status);
    const draw = routeRandom(7, 'd5');
    expect(statuses).toEqual(Array.from({ length: 40 }, () => chaosReply(mix, draw()).status));
    expect(new Set(statuses)).toEqual(new Set([200, 429, 500]));
  });

  it('answers a rate-limited route as drawn up to its rate and 429 with Retry-After beyond it, afresh after a new plan', async () => {
    rx.setPlan({ routes: { d1: { ratePerS: 2, retryAfterS: 2 } } });
    const burst = async () => Promise.all(Array.from({ length: 8 }, () => post(`${rx.urls[1]}/d1`)));
    const answers = await burst();
    // A full bucket holds one second's worth; the requests of one burst take far less than the 500 ms a token takes to refill.
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 429, 429, 429, 429, 429, 429]);
    expect(answers.find((r) => r.status === 429)?.headers.get('retry-after')).toBe('2');
    expect((await post(`${rx.urls[0]}/d0`)).status).toBe(200);
    rx.setPlan({ routes: { d1: { ratePerS: 2 } } });
    expect((await burst()).filter((r) => r.status === 200)).toHaveLength(2);
  });

  it('counts bad and missing signatures, refuses on a listener that is down, and listens again on the same port', async () => {
    rx.setPlan({ routes: {} });
    const before = rx.stats();
    await post(`${rx.urls[2]}/d2`, { signature: signBody('other', body(1234.5)) });
    await post(`${rx.urls[2]}/d2`, { signature: null });
    expect(rx.stats()).toMatchObject({ badSignatures: before.badSignatures + 1, unsigned: before.unsigned + 1 });
    await rx.down(2);
    await expect(post(`${rx.urls[2]}/d2`)).rejects.toThrow();
    expect((await post(`${rx.urls[0]}/d0`)).status).toBe(200);
    await rx.up(2);
    expect((await post(`${rx.urls[2]}/d2`)).status).toBe(200);
    expect(rx.delivered.get('d2')).toBeGreaterThanOrEqual(1);
  });

  it('serves https with a self-signed certificate: a verifying client is refused before any request, another gets through', async () => {
    const before = rx.stats();
    await expect(post(`${rx.httpsUrl}/d0`)).rejects.toThrow();
    const status = await new Promise<number | undefined>((resolve, reject) =>
      https
        .request(`${rx.httpsUrl}/d0`, { method: 'POST', rejectUnauthorized: false }, (res) => resolve(res.resume().statusCode))
        .on('error', reject)
        .end('{}'),
    );
    expect(status).toBe(200);
    expect(rx.stats().tlsClientErrors).toBeGreaterThan(before.tlsClientErrors);
    expect(rx.stats().tlsRequests).toBe(before.tlsRequests + 1);
  });
});

describe('TokenBucket', () => {
  it('starts full with one second of tokens, refills at its rate, and never holds more than its burst', () => {
    const b = new TokenBucket(200);
    const taken = (n: number, at: number) => Array.from({ length: n }, () => b.take(at)).filter(Boolean).length;
    expect(taken(250, 1000)).toBe(200);
    expect(taken(10, 1000)).toBe(0);
    // 50 ms at 200/s: 10 tokens.
    expect(taken(20, 1050)).toBe(10);
    // A long pause refills no more than the burst.
    expect(taken(1000, 60_000)).toBe(200);
    // From empty, requests at twice the rate: every other one is admitted, 200 a second.
    expect(Array.from({ length: 800 }, (_, i) => b.take(60_000 + (i + 1) * 2.5)).filter(Boolean)).toHaveLength(400);
    // A clock that steps back takes nothing back.
    const c = new TokenBucket(1, 1);
    expect([c.take(5000), c.take(4000), c.take(5500), c.take(6000)]).toEqual([true, false, false, true]);
  });
});

describe('startChaosProcess', () => {
  beforeAll(() => execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', path.join(REPO_ROOT, 'packages/testkit')]));

  it('runs the receiver in a child process: plan, deliveries pushed, records pulled', async () => {
    const child = await startChaosProcess({ listeners: 2, secret: SECRET });
    try {
      await child.setPlan({ routes: { d1: { fail500: 1 } } });
      // The child pushes its counts whenever they change, an empty map at start included: wait for the one with d0.
      const pushed = new Promise<Record<string, number>>((resolve) => child.onDelivered((byRoute) => byRoute['d0'] && resolve(byRoute)));
      expect([(await post(`${child.urls[0]}/d0`)).status, (await post(`${child.urls[1]}/d1`)).status]).toEqual([200, 500]);
      expect(await pushed).toEqual({ d0: 1 });
      const records: Arrival[] = [];
      await child.pull((a) => records.push(a));
      expect(records.map((a) => [a.route, a.status, a.sentAtMs])).toEqual([
        ['d0', 200, 1234.5],
        ['d1', 500, 1234.5],
      ]);
      expect(await child.stats()).toMatchObject({ badSignatures: 0, unsigned: 0 });
    } finally {
      await child.stop();
    }
  });
});
