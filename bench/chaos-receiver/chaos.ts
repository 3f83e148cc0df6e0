/**
 * The chaos receiver's request handler and counters, shared by every listener (main.ts owns the
 * listeners, TLS and IPC). Per request: read the body, check the signature, pick the route's
 * action from its own seeded stream, answer (or not), and write one record when the answer has
 * finished or the request was abandoned, so a record's status is final.
 *
 * The bench pushes thousands of POSTs a second through this on a machine it shares with the system
 * under test, so the hot path avoids work: sentAtMs is found with Buffer.indexOf (no decoding of the
 * body, no JSON.parse), routes and their random streams are looked up in maps, and the usual answer
 * is a bare 200 with an empty body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { verifySignature } from '@eventrelay/config';
import { behaviourFor, chooseAction, DEFAULT_SEED, routeRandom, type Action, type Behaviour, type ChaosPlan } from './behaviour.js';
import { RecordStore, type RequestRecord, type SignatureCheck } from './records.js';

/** What was done with a request: the Behaviour share that picked it, ok, or a malformed path form. */
export type ActionName = 'ok' | 'fail500' | 'fail429' | 'hang' | 'reset' | 'redirect' | 'badPath';

export interface ChaosStats {
  /** Requests whose body was fully read (each gets a record once answered or abandoned). */
  readonly requests: number;
  readonly recorded: number;
  /** Read but not yet recorded: hung, delayed, or a slow body still being written. */
  readonly inFlight: number;
  /** Answered 2xx and the answer finished. */
  readonly delivered: number;
  /** Records by final status ("0" = hung, reset or abandoned). */
  readonly byStatus: Record<string, number>;
  readonly byAction: Record<ActionName, number>;
  readonly signatures: Record<SignatureCheck, number>;
  readonly badSignatures: number;
  /** No X-Signature while a secret is set. */
  readonly unsigned: number;
  /** Requests that came over the HTTPS listener. */
  readonly tlsRequests: number;
  readonly tlsHandshakes: number;
  /**
   * Failed handshakes. A client that refuses the self-signed certificate shows up here over TLS 1.3
   * (Node's default); over TLS 1.2 the server's side of the handshake completes before the client
   * checks the certificate, so it shows up as a handshake without a request instead.
   */
  readonly tlsClientErrors: number;
  /** Connections closed before the request body was complete (no record). */
  readonly abortedBeforeBody: number;
}

/** A request between its body being read and its record being written. */
interface Pending extends RequestRecord {
  status: number;
  /** Recorded: the answer finished or the connection closed. */
  done: boolean;
}

type Resolved = { readonly route: string; readonly behaviour: Behaviour } | { readonly route: string; readonly error: string };

const SENT_AT = Buffer.from('"sentAtMs":');
/** Enough characters for any JSON number an epoch-ms timestamp is written as. */
const SENT_AT_CHARS = 40;
const NO_BODY = Buffer.alloc(0);
const EMPTY_HEADERS = { 'content-length': '0' } as const;
const SLOW_STEPS = 10;
const SLOW_CHUNK = 'chaos-slow\n';
/** Distinct paths and routes remembered; beyond it the caches start over (a run has a handful). */
const CACHE_LIMIT = 10_000;

export class ChaosReceiver {
  readonly records = new RecordStore();
  tlsHandshakes = 0;
  tlsClientErrors = 0;
  /** Bumped on every delivery, so the IPC push can tell whether anything changed. */
  delivered = 0;
  readonly deliveredByRoute = new Map<string, number>();

  private plan: ChaosPlan;
  private readonly resolved = new Map<string, Resolved>();
  private readonly randoms = new Map<string, () => number>();
  private requests = 0;
  private abortedBeforeBody = 0;
  private tlsRequests = 0;
  private readonly byStatus = new Map<number, number>();
  private readonly byAction: Record<ActionName, number> = { ok: 0, fail500: 0, fail429: 0, hang: 0, reset: 0, redirect: 0, badPath: 0 };
  private readonly signatures: Record<SignatureCheck, number> = { ok: 0, bad: 0, unsigned: 0, none: 0 };

  constructor(
    private readonly secret: string | null,
    plan: ChaosPlan,
    private readonly clock: () => number = () => performance.timeOrigin + performance.now(),
  ) {
    this.plan = plan;
  }

  /** Swaps the plan in at once; every route's stream restarts from the plan's seed, so a phase repeats. */
  setPlan(plan: ChaosPlan): void {
    this.plan = plan;
    this.resolved.clear();
    this.randoms.clear();
  }

  readonly handleHttp = (req: IncomingMessage, res: ServerResponse): void => this.handle(req, res, false);
  readonly handleHttps = (req: IncomingMessage, res: ServerResponse): void => this.handle(req, res, true);

  stats(): ChaosStats {
    const recorded = this.records.length;
    return {
      requests: this.requests,
      recorded,
      inFlight: this.requests - recorded,
      delivered: this.delivered,
      byStatus: Object.fromEntries([...this.byStatus].map(([s, n]) => [String(s), n])),
      byAction: { ...this.byAction },
      signatures: { ...this.signatures },
      badSignatures: this.signatures.bad,
      unsigned: this.signatures.unsigned,
      tlsRequests: this.tlsRequests,
      tlsHandshakes: this.tlsHandshakes,
      tlsClientErrors: this.tlsClientErrors,
      abortedBeforeBody: this.abortedBeforeBody,
    };
  }

  private handle(req: IncomingMessage, res: ServerResponse, tls: boolean): void {
    if (req.method === 'GET' && req.url === '/healthz') {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
      return;
    }
    let first: Buffer | undefined;
    let more: Buffer[] | undefined;
    let pending: Pending | undefined;
    req.on('data', (c: Buffer) => {
      if (first === undefined) first = c;
      else if (more === undefined) more = [first, c];
      else more.push(c);
    });
    req.on('end', () => {
      pending = this.received(req, res, tls, more !== undefined ? Buffer.concat(more) : (first ?? NO_BODY));
    });
    // 'close' follows 'finish' for an answer that completed, and comes alone when the connection
    // closed first (the client gave up, a reset, a hung request released at shutdown).
    res.once('close', () => {
      if (pending === undefined) this.abortedBeforeBody++;
      else this.finish(pending, res);
    });
  }

  private received(req: IncomingMessage, res: ServerResponse, tls: boolean, body: Buffer): Pending {
    const arrivalMs = this.clock();
    this.requests++;
    if (tls) this.tlsRequests++;
    const url = req.url ?? '/';
    const resolved = this.resolve(url);
    const messageId = req.headers['x-eventrelay-message-id'];
    const attempt = Number(req.headers['x-eventrelay-attempt']);
    const signature = this.checkSignature(req.headers['x-signature'], body);
    this.signatures[signature]++;
    const pending: Pending = {
      arrivalMs,
      route: resolved.route,
      messageId: typeof messageId === 'string' ? messageId : '',
      attempt: Number.isInteger(attempt) && attempt >= 0 && attempt <= 0xffffffff ? attempt : 0,
      sentAtMs: sentAtOf(body),
      status: 0,
      signature,
      tls,
      done: false,
    };
    if ('error' in resolved) {
      this.byAction.badPath++;
      const text = `${resolved.error}\n`;
      res.writeHead(400, { 'content-type': 'text/plain', 'content-length': String(Buffer.byteLength(text)) });
      res.end(text);
      return pending;
    }
    const { behaviour, route } = resolved;
    const action = chooseAction(behaviour, this.randomOf(route)());
    this.byAction[actionName(action)]++;
    const delayMs = behaviour.delayMs ?? 0;
    if (delayMs > 0) setTimeout(() => this.act(pending, req, res, action, behaviour), delayMs);
    else this.act(pending, req, res, action, behaviour);
    return pending;
  }

  private act(pending: Pending, req: IncomingMessage, res: ServerResponse, action: Action, behaviour: Behaviour): void {
    // The client went away during the delay: it is recorded already, there is nobody to answer.
    if (pending.done) return;
    switch (action.kind) {
      case 'ok':
        if ((behaviour.slowBodyMs ?? 0) > 0) slowBody(res, pending, behaviour.slowBodyMs ?? 0);
        else {
          res.writeHead(200, EMPTY_HEADERS);
          res.end();
        }
        return;
      case 'status':
        if (action.status === 500) res.writeHead(500, EMPTY_HEADERS);
        else res.writeHead(429, { 'retry-after': String(action.retryAfterS), 'content-length': '0' });
        res.end();
        return;
      case 'redirect':
        res.writeHead(302, { location: action.location, 'content-length': '0' });
        res.end();
        return;
      case 'hang':
        // Nothing: the request stays open until the client closes its socket or the process stops.
        return;
      case 'reset':
        resetSocket(req.socket, pending.tls);
        return;
    }
  }

  private finish(pending: Pending, res: ServerResponse): void {
    pending.done = true;
    const status = res.writableFinished ? res.statusCode : 0;
    pending.status = status;
    this.records.add(pending);
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
    if (status >= 200 && status < 300) {
      this.delivered++;
      this.deliveredByRoute.set(pending.route, (this.deliveredByRoute.get(pending.route) ?? 0) + 1);
    }
  }

  private resolve(url: string): Resolved {
    let r = this.resolved.get(url);
    if (r !== undefined) return r;
    try {
      r = behaviourFor(this.plan, url);
    } catch (err) {
      const route = url.split('?')[0]!.split('/').slice(1, 3).join('/');
      r = { route, error: (err as Error).message };
    }
    if (this.resolved.size >= CACHE_LIMIT) this.resolved.clear();
    this.resolved.set(url, r);
    return r;
  }

  private randomOf(route: string): () => number {
    let random = this.randoms.get(route);
    if (random === undefined) {
      if (this.randoms.size >= CACHE_LIMIT) this.randoms.clear();
      random = routeRandom(this.plan.seed ?? DEFAULT_SEED, route);
      this.randoms.set(route, random);
    }
    return random;
  }

  private checkSignature(header: string | string[] | undefined, body: Buffer): SignatureCheck {
    if (this.secret === null) return 'none';
    if (typeof header !== 'string') return 'unsigned';
    return verifySignature(this.secret, body, header) ? 'ok' : 'bad';
  }
}

function actionName(action: Action): ActionName {
  switch (action.kind) {
    case 'status':
      return action.status === 500 ? 'fail500' : 'fail429';
    case 'ok':
    case 'hang':
    case 'reset':
    case 'redirect':
      return action.kind;
  }
}

/** properties.sentAtMs, read straight from the bytes; NaN when the body has none. */
function sentAtOf(body: Buffer): number {
  const at = body.indexOf(SENT_AT);
  if (at === -1) return NaN;
  const start = at + SENT_AT.length;
  // parseFloat stops at the comma or brace after the number.
  return parseFloat(body.toString('latin1', start, Math.min(body.length, start + SENT_AT_CHARS)));
}

/** Headers now, then the body in steps; the body ends no sooner than `ms` after the headers. */
function slowBody(res: ServerResponse, pending: Pending, ms: number): void {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(SLOW_CHUNK.length * SLOW_STEPS) });
  res.flushHeaders();
  const stepMs = Math.ceil(ms / SLOW_STEPS);
  let sent = 0;
  const tick = (): void => {
    if (pending.done) return;
    res.write(SLOW_CHUNK);
    if (++sent === SLOW_STEPS) res.end();
    else setTimeout(tick, stepMs);
  };
  setTimeout(tick, stepMs);
}

/**
 * A TCP RST (the client sees ECONNRESET), not a polite FIN. A TLS socket has no TCP handle of
 * its own to reset, so it is destroyed, which the client sees as the connection closing unanswered.
 */
function resetSocket(socket: Socket, tls: boolean): void {
  if (tls) socket.destroy();
  else socket.resetAndDestroy();
}
