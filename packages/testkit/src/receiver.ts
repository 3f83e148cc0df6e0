/**
 * A real HTTP or HTTPS webhook receiver on 127.0.0.1 that records every request with its raw body
 * bytes, answers as the caller tells it to (status, headers, a delay, or a fault: no answer, a
 * reset, a slow body), and, given the destination's shared secret, checks each X-Signature with
 * `verifySignature` as a real receiver must. chaos.ts builds the fault-injecting mode on it.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { SIGNATURE_HEADER, verifySignature } from '@eventrelay/config';

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  /** Date.now() when the request arrived complete. */
  readonly at: number;
  /** With a secret: whether X-Signature verified over the raw bytes; undefined without one. */
  readonly signatureValid: boolean | undefined;
}

export interface Reply {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Wait this long before answering (a slow or hung receiver). */
  readonly delayMs?: number;
  /** Never answer: the connection stays open until the client gives up or the receiver closes. */
  readonly hang?: boolean;
  /** Reset the connection instead of answering (a TCP RST; a TLS socket is destroyed). */
  readonly reset?: boolean;
  /** Send the headers at once and dribble the body over this many ms. */
  readonly slowBodyMs?: number;
}

/** Decides the answer to the n-th request (0-based). */
type Responder = (req: ReceivedRequest, index: number) => Reply;

export interface ReceiverOptions {
  /** The shared secret: every request's X-Signature is checked (see `signatureValid`, `badSignatures`). */
  readonly secret?: string;
  /** With a secret, answer 401 to a request whose signature does not verify, whatever the responder says. */
  readonly rejectBadSignatures?: boolean;
  readonly tls?: { readonly key: string; readonly cert: string };
  /** 200 "ok" to everything by default. */
  readonly responder?: Responder;
  /** The path in `url` (default /hook); the receiver answers on every path. */
  readonly path?: string;
  /** A free one by default. */
  readonly port?: number;
  /** Called for each request once recorded (printing, counting). */
  readonly onRequest?: (req: ReceivedRequest, index: number) => void;
  /** Called once each request's answer finished, or its connection closed first (status 0: hung, reset, abandoned). */
  readonly onAnswered?: (req: ReceivedRequest, status: number) => void;
  /** Keep every request in `requests` (default true; false for long runs that count through the callbacks). */
  readonly keep?: boolean;
}

export interface Receiver {
  /** Where to send: http://127.0.0.1:<port><path>, or https://localhost:<port><path> with TLS. */
  readonly url: string;
  readonly port: number;
  readonly requests: ReceivedRequest[];
  /** Requests whose signature did not verify (with a secret). */
  badSignatures(): ReceivedRequest[];
  /** TLS handshakes the server saw (HTTPS only): proves a client connected without sending a request. */
  readonly tlsConnections: () => number;
  /** Failed TLS handshakes (a client refusing the certificate, over TLS 1.3). */
  readonly tlsErrors: () => number;
  respond(responder: Responder): void;
  /** Resolves when at least `count` requests arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let responder: Responder = options.responder ?? (() => ({ status: 200 }));
  const waiters: { count: number; resolve: () => void }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let [tlsConnections, tlsErrors, count] = [0, 0, 0];
  const { secret } = options;

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const signatureValid = secret === undefined ? undefined : verifySignature(secret, body, req.headers[SIGNATURE_HEADER]);
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        at: Date.now(),
        signatureValid,
      };
      const index = count++;
      if (options.keep !== false) requests.push(received);
      options.onRequest?.(received, index);
      for (const w of [...waiters]) {
        if (requests.length < w.count) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const reply: Reply =
        signatureValid === false && options.rejectBadSignatures ? { status: 401, body: 'bad signature' } : responder(received, index);
      if (options.onAnswered) res.once('close', () => options.onAnswered?.(received, res.writableFinished ? res.statusCode : 0));
      const answer = () => {
        if (res.destroyed || reply.hang) return;
        if (reply.reset) return void ('encrypted' in req.socket ? req.socket.destroy() : req.socket.resetAndDestroy());
        const body = reply.body ?? 'ok';
        res.writeHead(reply.status ?? 200, {
          'content-type': 'text/plain',
          'content-length': String(Buffer.byteLength(body)),
          ...reply.headers,
        });
        const slowMs = reply.slowBodyMs ?? 0;
        if (slowMs <= 0) return void res.end(body);
        res.flushHeaders();
        // The body in ten steps, the last no sooner than slowBodyMs after the headers.
        for (let i = 1; i <= 10; i++) {
          const part = body.slice(Math.floor(((i - 1) * body.length) / 10), Math.floor((i * body.length) / 10));
          const timer = setTimeout(
            () => (timers.delete(timer), res.destroyed || (i === 10 ? res.end(part) : res.write(part))),
            (slowMs * i) / 10,
          );
          timers.add(timer);
        }
      };
      if (reply.delayMs) {
        const timer = setTimeout(() => (timers.delete(timer), answer()), reply.delayMs);
        timers.add(timer);
      } else answer();
    });
  };
  const server = options.tls ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handler) : http.createServer(handler);
  // Longer than any sender's idle keep-alive, so the receiver is never the side that drops a pooled connection.
  server.keepAliveTimeout = 65_000;
  server.on('secureConnection', () => tlsConnections++);
  server.on('tlsClientError', () => tlsErrors++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.tls ? 'localhost' : '127.0.0.1';
  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${port}${options.path ?? '/hook'}`,
    port,
    requests,
    badSignatures: () => requests.filter((r) => r.signatureValid === false),
    tlsConnections: () => tlsConnections,
    tlsErrors: () => tlsErrors,
    respond: (r) => void (responder = r),
    waitFor(count, timeoutMs = 15_000) {
      if (requests.length >= count) return Promise.resolve(requests);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${requests.length} of ${count} requests within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve(requests)) });
      });
    },
    close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
