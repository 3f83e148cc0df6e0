/**
 * One POST to one receiver URL through undici keep-alive pools (one pool per origin). Reports what
 * happened as a SendResult for the domain to classify; it never throws for a receiver's failure.
 */
import { EventEmitter } from 'node:events';
import { Agent } from 'undici';
import { isIP } from 'node:net';
import { isNativeError } from 'node:util/types';
import type { SendFailure, SendResult } from '../domain/outcome.js';
import { RESPONSE_BODY_EXCERPT } from '../domain/attempt-detail.js';
import { refusal, type Network } from '../domain/networks.js';
import { guardedLookup, systemResolver, type Resolver } from './address-guard.js';

export interface SenderOptions {
  /**
   * The whole attempt (connect, headers and body) must finish within this (DELIVERY_TIMEOUT_MS),
   * unless `send` is given a destination's own timeout.
   */
  readonly timeoutMs: number;
  readonly allowedNetworks: readonly Network[];
  readonly connectionsPerOrigin: number;
  /** Trusted CA certificates (PEM) replacing Node's default list; undefined keeps Node's. */
  readonly ca?: readonly string[] | undefined;
  readonly resolver?: Resolver;
  /**
   * Whether the attempt log will keep the answer to a response of this status (DELIVERY_LOG_DETAIL);
   * when not, the body is read and dropped without an excerpt. Always, by default.
   */
  readonly keepsAnswer?: (status: number) => boolean;
}

export interface Sender {
  send(url: string, headers: Record<string, string>, body: string, timeoutMs?: number): Promise<SendResult>;
  close(): Promise<void>;
}

/** The longest a destination's own timeout may be (its `timeoutMs` setting). */
const MAX_TIMEOUT_MS = 30_000;

/**
 * A response body is read up to this much, its first RESPONSE_BODY_EXCERPT bytes kept for the
 * attempt log and the rest thrown away: reading it keeps the connection for the next request,
 * and a body beyond this closes it.
 */
const RESPONSE_BODY_LIMIT = 64 * 1024;

export function createSender(options: SenderOptions): Sender {
  const agent = new Agent({
    connections: options.connectionsPerOrigin,
    pipelining: 1,
    // Receivers commonly close idle connections after 5 s (Node's default); closing ours first
    // avoids sending on a socket the other side is closing.
    keepAliveTimeout: 4000,
    keepAliveMaxTimeout: 4000,
    // Our own timer ends each attempt at its destination's timeout; undici's are only a backstop.
    headersTimeout: Math.max(options.timeoutMs, MAX_TIMEOUT_MS),
    bodyTimeout: Math.max(options.timeoutMs, MAX_TIMEOUT_MS),
    connect: {
      timeout: Math.max(options.timeoutMs, MAX_TIMEOUT_MS),
      lookup: guardedLookup(options.resolver ?? systemResolver, options.allowedNetworks),
      ...(options.ca ? { ca: [...options.ca] } : {}),
    },
  });

  // URLs come from a handful of destinations: parse and vet each once, not on every request.
  const targets = new Map<string, Target>();
  const targetOf = (url: string): Target => {
    let target = targets.get(url);
    if (!target) {
      target = parseTarget(url, options.allowedNetworks);
      if (targets.size >= 10_000) targets.clear();
      targets.set(url, target);
    }
    return target;
  };

  return {
    async send(url, headers, body, timeoutMs = options.timeoutMs) {
      const target = targetOf(url);
      if ('refused' in target) return target.refused;
      // The limit covers the whole attempt: queueing for a connection, connecting, headers and
      // body. undici takes an EventEmitter with `aborted` as its signal; at thousands of requests a
      // second that is much cheaper than an AbortSignal (EventTarget listeners cost microseconds).
      const deadline = Object.assign(new EventEmitter(), { aborted: false });
      let response: { destroy(err?: Error): unknown } | undefined;
      const timer = setTimeout(() => {
        deadline.aborted = true;
        deadline.emit('abort');
        response?.destroy(new Error('deadline passed'));
      }, timeoutMs);
      try {
        const res = await agent.request({ origin: target.origin, path: target.path, method: 'POST', headers, body, signal: deadline });
        response = res.body;
        const retryAfter = res.headers['retry-after'];
        const keep = options.keepsAnswer?.(res.statusCode) ?? true;
        // dump() resolves, not rejects, when the deadline destroyed a body that was still coming.
        const excerpt = keep ? await readExcerpt(res.body) : await res.body.dump({ limit: RESPONSE_BODY_LIMIT });
        if (deadline.aborted) return failure('timeout', `no complete response within ${timeoutMs} ms`);
        return {
          kind: 'response',
          status: res.statusCode,
          retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
          ...(excerpt ? { excerpt: { headers: res.headers, ...excerpt } } : {}),
        };
      } catch (err) {
        return deadline.aborted ? failure('timeout', `no complete response within ${timeoutMs} ms`) : describeError(err);
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => agent.close(),
  };
}

/** The body's first bytes as text; the rest is read and dropped, up to RESPONSE_BODY_LIMIT. */
async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<{ body: string; bodyTruncated: boolean }> {
  let kept: Buffer | undefined;
  let total = 0;
  for await (const chunk of body) {
    if (total < RESPONSE_BODY_EXCERPT) {
      const part = chunk.subarray(0, RESPONSE_BODY_EXCERPT - total);
      kept = kept === undefined ? part : Buffer.concat([kept, part]);
    }
    total += chunk.length;
    if (total > RESPONSE_BODY_LIMIT) {
      body.destroy();
      break;
    }
  }
  return { body: kept === undefined ? '' : kept.toString('utf8'), bodyTruncated: total > RESPONSE_BODY_EXCERPT };
}

type Target = { readonly origin: string; readonly path: string } | { readonly refused: SendResult };

function parseTarget(url: string, allowed: readonly Network[]): Target {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { refused: failure('invalid_url', `"${url}" is not a URL`) };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { refused: failure('invalid_url', `${parsed.protocol} is not http or https`) };
  // An IP literal is connected to without a lookup, so it is vetted here; hostnames are vetted at
  // every connect, by the lookup.
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) {
    const why = refusal(host, allowed);
    if (why !== undefined) return { refused: failure('address_refused', why) };
  }
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

function failure(kind: SendFailure, detail: string): SendResult {
  return { kind: 'failure', failure: kind, detail };
}

const TLS_CODES =
  /^(CERT_|ERR_TLS_CERT|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(GET_ISSUER_CERT|VERIFY_LEAF_SIGNATURE|DECRYPT_CERT))/;

/**
 * Maps Node and undici errors (possibly wrapped in `cause`) onto the outcome table's terms.
 * `isNativeError`, not `instanceof Error`: errors raised by Node's net/tls/dns come from another
 * realm than the code when it runs in a vm context (as under jest), and would not match.
 */
function describeError(err: unknown): SendResult {
  for (let e: unknown = err, depth = 0; isError(e) && depth < 5; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    const detail = code ? `${code}: ${e.message}` : e.message;
    if (code === 'ERR_EVENTRELAY_ADDRESS_REFUSED') return failure('address_refused', e.message);
    if (TLS_CODES.test(code)) return failure('tls_untrusted', detail);
    if (code === 'ECONNREFUSED') return failure('connection_refused', detail);
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED')
      return failure('connection_reset', detail);
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NODATA') return failure('dns_failure', detail);
    if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
      return failure('timeout', detail);
    // The request itself cannot be sent (a header the client refuses): sending it again will not help.
    if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED') return failure('invalid_request', detail);
  }
  const message = isError(err) ? `${(err as NodeJS.ErrnoException).code ?? err.name}: ${err.message}` : String(err);
  return failure('network_error', message);
}

function isError(e: unknown): e is Error {
  return e instanceof Error || isNativeError(e);
}
