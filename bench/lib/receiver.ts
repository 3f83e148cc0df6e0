/**
 * The webhook receiver of `pnpm bench:pipeline`, run as its own process (node --import tsx, with
 * an IPC channel): a plain node:http server that reads each POST, answers 200 with an empty body,
 * and measures the call's end-to-end latency as its arrival time minus `properties.sentAtMs`, the
 * time the load generator put in the call when it sent it (both read as performance.timeOrigin +
 * performance.now(), which agree across processes on one machine to well under a millisecond).
 *
 * With SHARED_SECRET set, every X-Signature (HMAC-SHA1, hex, of the raw body) is checked, so the
 * figures are for signed POSTs that a real receiver would accept.
 *
 * IPC: events `{ type: 'total', total }` (every call ever received, pushed every 10 ms while it
 * changes; the load generator's window uses it); calls `total` (that count now), `reset` (start a
 * measurement window),
 * `stats` (the window's count and latency percentiles), `forget` (clear the duplicate check).
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { emitIpc, serveIpc } from './ipc.js';

export interface ReceiverStats {
  /** Calls received in the window (every POST counts, duplicates too). */
  readonly delivered: number;
  /** Calls received since the receiver started. */
  readonly total: number;
  readonly windowS: number;
  readonly p50Ms: number | null;
  readonly p90Ms: number | null;
  readonly p99Ms: number | null;
  readonly maxMs: number | null;
  readonly meanMs: number | null;
  /** Calls whose X-Signature did not match (should be 0). */
  readonly badSignatures: number;
  /** Calls without X-Signature while a secret is set (should be 0). */
  readonly unsigned: number;
  /** Calls without a readable sentAtMs (not in the percentiles). */
  readonly noStamp: number;
  /** Calls whose message id had been received before (since the last `forget`). */
  readonly duplicates: number;
}

const port = Number(process.env['PORT'] ?? 0);
const secret = process.env['SHARED_SECRET'] || undefined;
const SENT_AT = /"sentAtMs":(\d+(?:\.\d+)?)/;
const MESSAGE_ID = /"messageId":"([^"]+)"/;

let total = 0;
let delivered = 0;
let latencies = new Float64Array(1 << 16);
/** Entries of `latencies` in use. */
let stamped = 0;
let windowStart = performance.now();
let badSignatures = 0;
let unsigned = 0;
let noStamp = 0;
let duplicates = 0;
const seen = new Set<string>();

function record(req: IncomingMessage, body: Buffer, now: number): void {
  total++;
  delivered++;
  const text = body.toString('utf8');
  const stamp = SENT_AT.exec(text);
  if (stamp) {
    if (stamped === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[stamped++] = now - Number(stamp[1]);
  } else noStamp++;
  if (secret !== undefined) {
    const signature = req.headers['x-signature'];
    if (typeof signature !== 'string') unsigned++;
    else if (createHmac('sha1', secret).update(body).digest('hex') !== signature) badSignatures++;
  }
  const header = req.headers['x-eventrelay-message-id'];
  const id = typeof header === 'string' ? header : MESSAGE_ID.exec(text)?.[1];
  if (id !== undefined) {
    if (seen.has(id)) duplicates++;
    else seen.add(id);
  }
}

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const now = performance.timeOrigin + performance.now();
    record(req, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks), now);
    res.writeHead(200, { 'content-length': '0' });
    res.end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1');

let pushed = -1;
setInterval(() => {
  if (total === pushed) return;
  pushed = total;
  emitIpc({ type: 'total', total });
}, 10).unref();

function percentile(sorted: Float64Array, q: number): number | null {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return Math.round((sorted[i] as number) * 100) / 100;
}

serveIpc((msg) => {
  switch (msg.type) {
    case 'reset':
      delivered = 0;
      stamped = 0;
      badSignatures = 0;
      unsigned = 0;
      noStamp = 0;
      duplicates = 0;
      windowStart = performance.now();
      return { total };
    case 'total':
      return { total };
    case 'forget':
      seen.clear();
      return { total };
    case 'stats': {
      const sorted = latencies.slice(0, stamped).sort();
      let sum = 0;
      for (const v of sorted) sum += v;
      const stats: ReceiverStats = {
        delivered,
        total,
        windowS: (performance.now() - windowStart) / 1000,
        p50Ms: percentile(sorted, 0.5),
        p90Ms: percentile(sorted, 0.9),
        p99Ms: percentile(sorted, 0.99),
        maxMs: percentile(sorted, 1),
        meanMs: sorted.length === 0 ? null : Math.round((sum / sorted.length) * 100) / 100,
        badSignatures,
        unsigned,
        noStamp,
        duplicates,
      };
      return stats;
    }
    default:
      throw new Error(`unknown request "${msg.type}"`);
  }
});

process.on('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
