/**
 * A transparent recording hop between a real SDK and the in-process ingest: the SDK's host setting
 * points here, every request is forwarded byte for byte to ingest and ingest's answer is relayed
 * back unchanged. The tests read what each SDK actually put on the wire (path, headers, raw body)
 * and what ingest answered, without mocking either side.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

export interface WireExchange {
  readonly method: string;
  /** Path and query as the SDK sent them. */
  readonly path: string;
  /** Request headers as the SDK sent them (lower-case names). */
  readonly headers: IncomingHttpHeaders;
  /** The raw request body, still compressed when the SDK compressed it. */
  readonly body: Buffer;
  /** Ingest's answer, or 0 when ingest could not be reached. */
  readonly status: number;
  readonly responseHeaders: IncomingHttpHeaders;
  readonly responseText: string;
  /** The status the SDK got: ingest's, unless this answer was deliberately lost (see loseAnswers). */
  readonly relayedStatus: number;
}

export interface WireRecorder {
  /** Base URL to give the SDK as its host. */
  readonly url: string;
  readonly exchanges: WireExchange[];
  close(): Promise<void>;
}

// Hop-by-hop headers belong to one connection; they are recorded but not forwarded.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function forwardable(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
  return out;
}

export interface WireRecorderOptions {
  /**
   * Forward the first N requests to ingest as usual, but answer the SDK 503 instead of ingest's
   * answer: the network lost a success, so the SDK resends calls ingest already stored.
   */
  loseAnswers?: number;
}

export async function startWireRecorder(targetBaseUrl: string, options: WireRecorderOptions = {}): Promise<WireRecorder> {
  const target = new URL(targetBaseUrl);
  const exchanges: WireExchange[] = [];
  let toLose = options.loseAnswers ?? 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = forwardable(req.headers);
      headers['host'] = target.host;
      headers['content-length'] = String(body.length);
      const upstream = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent: false },
        (up) => {
          const answer: Buffer[] = [];
          up.on('data', (c: Buffer) => answer.push(c));
          up.on('end', () => {
            const text = Buffer.concat(answer).toString('utf8');
            const lose = toLose > 0;
            if (lose) toLose--;
            const relayedStatus = lose ? 503 : (up.statusCode ?? 502);
            exchanges.push({
              method: req.method ?? '',
              path: req.url ?? '',
              headers: req.headers,
              body,
              status: up.statusCode ?? 0,
              responseHeaders: up.headers,
              responseText: text,
              relayedStatus,
            });
            if (lose) {
              res.writeHead(503, { 'content-type': 'application/json' });
              res.end(JSON.stringify({ success: false, code: 'service_unavailable', message: 'answer lost by the test recorder' }));
              return;
            }
            res.writeHead(relayedStatus, forwardable(up.headers) as http.OutgoingHttpHeaders);
            res.end(text);
          });
        },
      );
      upstream.on('error', (err) => {
        exchanges.push({
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body,
          status: 0,
          responseHeaders: {},
          responseText: `upstream error: ${err.message}`,
          relayedStatus: 502,
        });
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(err.message);
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The request body as JSON, inflated first when the SDK declared a Content-Encoding. */
export function decodeJsonBody(exchange: WireExchange): Record<string, unknown> {
  const encoding = String(exchange.headers['content-encoding'] ?? '').toLowerCase();
  const bytes =
    encoding === 'gzip' ? zlib.gunzipSync(exchange.body) : encoding === 'deflate' ? zlib.inflateSync(exchange.body) : exchange.body;
  return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
}

/** The user name of an HTTP Basic Authorization header, or undefined. */
export function basicAuthUser(exchange: WireExchange): string | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(String(exchange.headers['authorization'] ?? ''));
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  return decoded.split(':')[0];
}

/** Every batch item the SDK sent, in wire order, with the exchange it travelled in. */
export function wireItems(
  exchanges: readonly WireExchange[],
): Array<{ item: Record<string, unknown>; envelope: Record<string, unknown>; exchange: WireExchange }> {
  return exchanges.flatMap((exchange) => {
    const envelope = decodeJsonBody(exchange);
    const batch = Array.isArray(envelope['batch']) ? (envelope['batch'] as Array<Record<string, unknown>>) : [];
    return batch.map((item) => ({ item, envelope, exchange }));
  });
}
