/**
 * Request bodies with a fresh messageId on every call, built cheaply: a pre-built JSON template
 * split at its slots, joined around a counter (and a send time). Ingest dedupes messageIds, so a
 * repeated id would be acknowledged but not accepted, and the bench would count nothing.
 */
const SLOT = '@@N@@';
const SENT_SLOT = '"@@T@@"';

/** One Segment-style track call of about 600 bytes, as server SDKs send them. */
export function trackCall(messageId: string, timestamp: string): Record<string, unknown> {
  return {
    type: 'track',
    event: 'Order Completed',
    userId: 'user-0001234567',
    anonymousId: '3f1c2a9e-5b7d-4e21-9c0a-7d8e6f5a4b3c',
    messageId,
    timestamp,
    properties: {
      orderId: 'ord-20261121-000042',
      total: 129.95,
      currency: 'EUR',
      products: [
        { productId: 'sku-1001', name: 'Trail shoes', price: 89.95, quantity: 1 },
        { productId: 'sku-2002', name: 'Socks (3 pairs)', price: 19.95, quantity: 2 },
      ],
    },
    context: {
      library: { name: 'analytics-node', version: '6.2.0' },
      ip: '203.0.113.42',
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36',
    },
    integrations: { All: true },
  };
}

export interface Bodies {
  /** Calls per body. */
  readonly calls: number;
  /** Bytes of one body (the counter's width changes it by a few bytes). */
  readonly approxBytes: number;
  /** The counter of the last body made: its calls' messageIds are `messageIdOf(tag, counter, i)`. */
  readonly counter: number;
  /** The next body; with `timed`, every call's properties.sentAtMs = `sentAtMs` (epoch ms), which the receiver subtracts from its arrival. */
  next(sentAtMs?: number): string;
}

/** The messageId of call `index` of body `counter` of bodies(tag, …). */
export const messageIdOf = (tag: string, counter: number | string, index: number): string => `p-${tag}-${counter}-${index}`;

/** `size` calls to /v1/batch, or with `single` one call to /v1/track (size 1); `tag` keeps ids unique across runs. */
export function bodies(tag: string, size: number, o: { single?: boolean; timed?: boolean } = {}): Bodies {
  if (o.single && size !== 1) throw new Error(`a single-call body holds one call, not ${size}`);
  const ts = new Date().toISOString();
  const batch = Array.from({ length: size }, (_, i) => {
    const call = trackCall(messageIdOf(tag, SLOT, i), ts);
    return o.timed ? { ...call, properties: { ...(call['properties'] as object), sentAtMs: '@@T@@' } } : call;
  });
  const pieces = JSON.stringify(o.single ? { ...batch[0], sentAt: ts } : { batch, sentAt: ts }).split(/(@@N@@|"@@T@@")/);
  if (pieces.filter((p) => p === SLOT).length !== size) throw new Error(`body template has the wrong number of slots for ${size} calls`);
  const join = (n: string, t: string) => pieces.map((p) => (p === SLOT ? n : p === SENT_SLOT ? t : p)).join('');
  let counter = 0;
  return {
    calls: size,
    approxBytes: Buffer.byteLength(join('0', '1795000000000.000')),
    get counter() {
      return counter;
    },
    next: (sentAtMs = 0) => join(String(++counter), sentAtMs.toFixed(3)),
  };
}
