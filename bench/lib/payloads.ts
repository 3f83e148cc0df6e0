/**
 * Request bodies with a fresh messageId on every call, built cheaply: each body is a pre-built
 * JSON template split at a placeholder, joined around a counter. Ingest dedupes messageIds, so a
 * repeated id would be acknowledged but not accepted, and the bench would count nothing.
 */
const SLOT = '@@N@@';

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

export interface BodyFactory {
  /** Calls per body. */
  readonly calls: number;
  /** Bytes of one body (the counter's width changes it by a few bytes). */
  readonly approxBytes: number;
  next(): string;
}

/** A template must hold one counter slot per call, or ids would repeat (or the slot leak through). */
function assertSlots(template: string, calls: number): void {
  const slots = template.split(SLOT).length - 1;
  if (slots !== calls) throw new Error(`body template has ${slots} counter slots for ${calls} calls`);
}

function fromTemplate(template: string, calls: number): BodyFactory {
  assertSlots(template, calls);
  const parts = template.split(SLOT);
  let counter = 0;
  const first = parts.join('0');
  return {
    calls,
    approxBytes: Buffer.byteLength(first),
    next: () => parts.join(String(++counter)),
  };
}

/** `runTag` keeps ids unique across runs as well as within one. */
export function singleCallBodies(runTag: string): BodyFactory {
  const ts = new Date().toISOString();
  return fromTemplate(JSON.stringify(trackCall(`s-${runTag}-${SLOT}`, ts)), 1);
}

export function batchBodies(runTag: string, size: number): BodyFactory {
  const ts = new Date().toISOString();
  const batch = Array.from({ length: size }, (_, i) => trackCall(`b-${runTag}-${SLOT}-${i}`, ts));
  return fromTemplate(JSON.stringify({ batch, sentAt: ts }), size);
}

/** Where a timed body puts its send time (a JSON number, so the quotes go too). */
const SENT_SLOT = '"@@T@@"';

export interface TimedBodyFactory {
  readonly calls: number;
  readonly approxBytes: number;
  /** A body whose every call carries `properties.sentAtMs` = `sentAtMs` (fractional epoch ms). */
  next(sentAtMs: number): string;
  /** The counter of the last body made: its calls' messageIds are `messageIdOf(tag, counter, i)`. */
  readonly counter: number;
}

/** The messageId of call `index` of body `counter` of timedBatchBodies(tag, …). */
export function messageIdOf(tag: string, counter: number | string, index: number): string {
  return `p-${tag}-${counter}-${index}`;
}

/**
 * Bodies for the pipeline bench: like batchBodies, and each call's properties carry the time the
 * batch was sent (`sentAtMs`), which the receiver subtracts from its arrival time. With `single`
 * (size 1) the body is the call itself, for the single-call endpoints browser SDKs use.
 */
export function timedBatchBodies(runTag: string, size: number, options: { single?: boolean } = {}): TimedBodyFactory {
  const ts = new Date().toISOString();
  const single = options.single === true;
  if (single && size !== 1) throw new Error(`a single-call body holds one call, not ${size}`);
  const batch = Array.from({ length: size }, (_, i) => {
    const call = trackCall(messageIdOf(runTag, SLOT, i), ts);
    return { ...call, properties: { ...(call['properties'] as Record<string, unknown>), sentAtMs: '@@T@@' } };
  });
  const template = JSON.stringify(single ? { ...batch[0], sentAt: ts } : { batch, sentAt: ts });
  assertSlots(template, size);
  if (template.split(SENT_SLOT).length - 1 !== size)
    throw new Error(`body template has the wrong number of send-time slots for ${size} calls`);
  const pieces = template.split(/(@@N@@|"@@T@@")/);
  let counter = 0;
  return {
    calls: size,
    approxBytes: Buffer.byteLength(pieces.map((p) => (p === SLOT ? '0' : p === SENT_SLOT ? '1795000000000.000' : p)).join('')),
    get counter() {
      return counter;
    },
    next(sentAtMs: number) {
      const n = String(++counter);
      const t = sentAtMs.toFixed(3);
      return pieces.map((p) => (p === SLOT ? n : p === SENT_SLOT ? t : p)).join('');
    },
  };
}
