/**
 * The receiver's fault-injecting mode, for the scenario bench and for tests of how a sender copes:
 * one listener per destination (so destinations share no connection pool) and a self-signed https
 * one, every request answered as the behaviour of its route (the path's first segment) says, drawn
 * from a seeded stream per route so that a run repeats; signatures checked, and one arrival record
 * per request once its answer ended, taken with `drain()`. chaos-process.ts runs it in a process of its own.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SIGNATURE_HEADER } from '@eventrelay/config';
import { startReceiver, type ReceivedRequest, type Receiver, type ReceiverOptions, type Reply } from './receiver.js';

/** How a route answers. Shares are probabilities; their sum is at most 1, the rest is 2xx. */
export interface Behaviour {
  readonly fail500?: number;
  /** Answered 429 with Retry-After: retryAfterS (1 by default). */
  readonly fail429?: number;
  readonly retryAfterS?: number;
  /** Never answered: the connection stays open until the client gives up. */
  readonly hang?: number;
  /** The connection reset without an answer. */
  readonly reset?: number;
  /** Answered 302 to `location`, the cloud metadata address by default (a sender must never follow it). */
  readonly redirect?: number;
  readonly location?: string;
  /** 2xx answers send their headers at once and the body over this many ms. */
  readonly slowBodyMs?: number;
  /** Every answer waits this long. */
  readonly delayMs?: number;
  /** Answered 503 without Retry-After: a receiver that is up but not serving (drawn after redirect). */
  readonly unavailable?: number;
  /**
   * The route's rate limit: at most this many requests a second get the drawn answer (a token
   * bucket refilled at this rate, holding one second's worth, full at the start); the others are
   * answered 429 with Retry-After: retryAfterS (1 by default), as an API's rate limiter does.
   */
  readonly ratePerS?: number;
}

/** Behaviours by route ("d3" for /d3/hook; "*" for any other), and the seed of the draws (1 by default). */
export interface ChaosPlan {
  readonly routes: Readonly<Record<string, Behaviour>>;
  readonly seed?: number;
}

/** One request, recorded when its answer ended. */
export interface Arrival {
  readonly route: string;
  /** X-Eventrelay-Message-Id ('' without one) and X-Eventrelay-Attempt (0 without one). */
  readonly messageId: string;
  readonly attempt: number;
  /** Epoch ms (high resolution) when the request body had arrived. */
  readonly arrivalMs: number;
  /** properties.sentAtMs of the (first) call in the body, NaN without one: the bench's send time. */
  readonly sentAtMs: number;
  /** The status answered; 0 when hung, reset or abandoned. */
  readonly status: number;
}

export const METADATA_URL = 'http://169.254.169.254/latest/meta-data/';
const SLOW_BODY = 'chaos-slow\n'.repeat(10);

/** The reply for a uniform draw r in [0, 1): cumulative shares fail500, fail429, hang, reset, redirect, unavailable, then 2xx. */
export function chaosReply(b: Behaviour, r: number): Reply {
  let edge = 0;
  const drawn = (share = 0) => r < (edge += share);
  const reply = (over: Reply): Reply => ({ body: '', ...over, ...(b.delayMs ? { delayMs: b.delayMs } : {}) });
  if (drawn(b.fail500)) return reply({ status: 500 });
  if (drawn(b.fail429)) return reply({ status: 429, headers: { 'retry-after': String(b.retryAfterS ?? 1) } });
  if (drawn(b.hang)) return { hang: true };
  if (drawn(b.reset)) return reply({ reset: true });
  if (drawn(b.redirect)) return reply({ status: 302, headers: { location: b.location ?? METADATA_URL } });
  if (drawn(b.unavailable)) return reply({ status: 503 });
  return reply(b.slowBodyMs ? { status: 200, body: SLOW_BODY, slowBodyMs: b.slowBodyMs } : { status: 200 });
}

/** The 429 a rate-limited route answers beyond its rate. */
const rateLimitedReply = (b: Behaviour): Reply => ({ status: 429, headers: { 'retry-after': String(b.retryAfterS ?? 1) }, body: '' });

/**
 * A token bucket: `ratePerS` tokens a second, holding at most `burst` (one second's worth by
 * default), full at the start. Pure: the caller passes the time (ms, any monotonic origin).
 */
export class TokenBucket {
  private tokens: number;
  private at: number | undefined;

  constructor(
    readonly ratePerS: number,
    readonly burst: number = ratePerS,
  ) {
    this.tokens = burst;
  }

  /** Takes a token when one is there. */
  take(nowMs: number): boolean {
    if (this.at !== undefined && nowMs > this.at)
      this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.at) / 1000) * this.ratePerS);
    this.at = Math.max(this.at ?? nowMs, nowMs);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** A stream of uniform draws per route (mulberry32, seeded from the plan's seed and the route name), so each route repeats whatever the others get. */
export function routeRandom(seed: number, route: string): () => number {
  let h = 0x811c9dc5;
  for (let i = 0; i < route.length; i++) h = Math.imul(h ^ route.charCodeAt(i), 0x01000193);
  let a = (h ^ seed) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A self-signed EC certificate for 127.0.0.1 and localhost, made by openssl in milliseconds. */
function selfSignedCert(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'testkit-cert-'));
  try {
    const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=127.0.0.1'];
    execFileSync('openssl', [...args, '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-days', '1', '-keyout', 'k', '-out', 'c'], {
      cwd: dir,
      stdio: 'pipe',
    });
    return { key: readFileSync(path.join(dir, 'k'), 'utf8'), cert: readFileSync(path.join(dir, 'c'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface ChaosReceiver {
  /** Base URL (no path, no trailing slash) of listener i, and of the https listener. */
  readonly urls: readonly string[];
  readonly httpsUrl: string;
  /** Swapped in at once; every route's stream restarts from the plan's seed, and its rate limit from a full bucket. */
  setPlan(plan: ChaosPlan): void;
  /** Listener i stops accepting and closes its connections (hung requests are recorded with status 0), or listens again on its port. */
  down(i: number): Promise<void>;
  up(i: number): Promise<void>;
  /** The records since the last drain (at most `max`), in the order their answers ended. */
  drain(max?: number): Arrival[];
  /** 2xx answers per route so far. */
  readonly delivered: ReadonlyMap<string, number>;
  /** Counts so far: bad signatures, unsigned requests (with a secret), requests over TLS and failed TLS handshakes. */
  stats(): { badSignatures: number; unsigned: number; tlsRequests: number; tlsClientErrors: number };
  close(): Promise<void>;
}

const sentAt = Buffer.from('"sentAtMs":');

export async function startChaosReceiver(o: { listeners: number; secret?: string; plan?: ChaosPlan }): Promise<ChaosReceiver> {
  let plan = o.plan ?? { routes: {} };
  const randoms = new Map<string, () => number>();
  const buckets = new Map<string, TokenBucket>();
  const arrivals = new WeakMap<ReceivedRequest, { route: string; arrivalMs: number }>();
  let records: Arrival[] = [];
  const delivered = new Map<string, number>();
  const counts = { badSignatures: 0, unsigned: 0, tlsRequests: 0 };
  const options = (tls: boolean): ReceiverOptions => ({
    ...(o.secret ? { secret: o.secret } : {}),
    keep: false,
    path: '',
    responder: (req) => {
      const route = req.path.split(/[/?]/)[1] ?? '';
      arrivals.set(req, { route, arrivalMs: performance.timeOrigin + performance.now() });
      let random = randoms.get(route);
      if (!random) randoms.set(route, (random = routeRandom(plan.seed ?? 1, route)));
      const behaviour = plan.routes[route] ?? plan.routes['*'] ?? {};
      // Drawn whatever the rate limit says, so that each request gets the same draw with or without one.
      const draw = random();
      if (behaviour.ratePerS !== undefined) {
        let bucket = buckets.get(route);
        if (!bucket) buckets.set(route, (bucket = new TokenBucket(behaviour.ratePerS)));
        if (!bucket.take(performance.now())) return rateLimitedReply(behaviour);
      }
      return chaosReply(behaviour, draw);
    },
    onAnswered: (req, status) => {
      const { route, arrivalMs } = arrivals.get(req) ?? { route: '', arrivalMs: NaN };
      const at = req.body.indexOf(sentAt);
      const sentAtMs = at < 0 ? NaN : parseFloat(req.body.toString('latin1', at + sentAt.length, at + sentAt.length + 40));
      const attempt = Number(req.headers['x-eventrelay-attempt']);
      const messageId = req.headers['x-eventrelay-message-id'];
      records.push({
        route,
        messageId: typeof messageId === 'string' ? messageId : '',
        attempt: attempt || 0,
        arrivalMs,
        sentAtMs,
        status,
      });
      if (status >= 200 && status < 300) delivered.set(route, (delivered.get(route) ?? 0) + 1);
      if (o.secret && req.headers[SIGNATURE_HEADER] === undefined) counts.unsigned++;
      else if (req.signatureValid === false) counts.badSignatures++;
      if (tls) counts.tlsRequests++;
    },
  });
  const listeners: (Receiver | undefined)[] = [];
  for (let i = 0; i < o.listeners; i++) listeners.push(await startReceiver(options(false)));
  const ports = listeners.map((l) => l?.port ?? 0);
  const https = await startReceiver({ ...options(true), tls: selfSignedCert() });
  return {
    urls: ports.map((p) => `http://127.0.0.1:${p}`),
    httpsUrl: `https://127.0.0.1:${https.port}`,
    setPlan(next) {
      plan = next;
      randoms.clear();
      buckets.clear();
    },
    async down(i) {
      await listeners[i]?.close();
      listeners[i] = undefined;
    },
    async up(i) {
      listeners[i] ??= await startReceiver({ ...options(false), port: ports[i] as number });
    },
    drain(max = Infinity) {
      const out = records.length <= max ? records : records.slice(0, max);
      records = out === records ? [] : records.slice(max);
      return out;
    },
    delivered,
    stats: () => ({ ...counts, tlsClientErrors: https.tlsErrors() }),
    async close() {
      await Promise.all([...listeners, https].map((l) => l?.close() ?? Promise.resolve()));
    },
  };
}
