/**
 * A real HTTP or HTTPS webhook receiver on 127.0.0.1:0 that records every request with its raw body
 * bytes and answers as the test tells it to (status, headers, a delay before answering).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  /** Date.now() when the request arrived complete. */
  readonly at: number;
}

export interface Reply {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Wait this long before answering (a slow or hung receiver). */
  readonly delayMs?: number;
}

/** Decides the answer to the n-th request (0-based). */
export type Responder = (req: ReceivedRequest, index: number) => Reply;

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly requests: ReceivedRequest[];
  /** TLS handshakes the server saw (HTTPS only): proves a client connected without sending a request. */
  readonly tlsConnections: () => number;
  respond(responder: Responder): void;
  /** Resolves when at least `count` requests arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(options: { tls?: { key: string; cert: string }; responder?: Responder; path?: string } = {}): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let responder: Responder = options.responder ?? (() => ({ status: 200 }));
  const waiters: { count: number; resolve: () => void }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let tlsConnections = 0;

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), at: Date.now() };
      const index = requests.length;
      requests.push(received);
      for (const w of [...waiters]) {
        if (requests.length < w.count) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const reply = responder(received, index);
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? 'ok');
      };
      if (reply.delayMs) {
        const timer = setTimeout(() => (timers.delete(timer), answer()), reply.delayMs);
        timers.add(timer);
      } else answer();
    });
  };
  const server = options.tls ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handler) : http.createServer(handler);
  if (options.tls) server.on('secureConnection', () => tlsConnections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const host = options.tls ? 'localhost' : '127.0.0.1';
  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${port}${options.path ?? '/hook'}`,
    port,
    requests,
    tlsConnections: () => tlsConnections,
    respond: (r) => void (responder = r),
    waitFor(count, timeoutMs = 15_000) {
      if (requests.length >= count) return Promise.resolve(requests);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${requests.length} of ${count} requests within ${timeoutMs} ms`)), timeoutMs);
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

/** What a receiver does: recompute the HMAC over the raw bytes and compare in constant time. */
export function signatureValid(secret: string, body: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !/^[0-9a-f]{40}$/.test(header)) return false;
  const expected = createHmac('sha1', secret).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(header, 'hex'));
}
