/**
 * X-Signature: lowercase hex HMAC-SHA1 over the exact bytes of the body sent, keyed with the
 * destination's shared secret (docs/delivery.md, "The webhook body"). webhook-delivery signs with
 * `signBody`; a receiver recomputes the HMAC over the raw request bytes, before any JSON parsing,
 * and compares with `verifySignature`, which takes the same time whatever bytes differ.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that carries the signature (lowercase, as Node's `req.headers` holds it). */
export const SIGNATURE_HEADER = 'x-signature';

const HEX_SHA1 = /^[0-9a-f]{40}$/;

/** The X-Signature value for `body` (a string is signed as its UTF-8 bytes). */
export function signBody(sharedSecret: string, body: string | Uint8Array): string {
  return hmac(sharedSecret, body).toString('hex');
}

/**
 * True when `header` is the signature of `body` under `sharedSecret`. Anything but one lowercase
 * hex SHA-1 (missing, repeated, another length or case) is false. The digests are compared with
 * `timingSafeEqual`, so the time taken does not tell an attacker how much of a forgery was right.
 */
export function verifySignature(sharedSecret: string, body: string | Uint8Array, header: string | readonly string[] | undefined): boolean {
  if (typeof header !== 'string' || !HEX_SHA1.test(header)) return false;
  return timingSafeEqual(hmac(sharedSecret, body), Buffer.from(header, 'hex'));
}

function hmac(sharedSecret: string, body: string | Uint8Array): Buffer {
  const mac = createHmac('sha1', sharedSecret);
  if (typeof body === 'string') mac.update(body, 'utf8');
  else mac.update(body);
  return mac.digest();
}
