/**
 * X-Signature: lowercase hex HMAC-SHA1 over the exact bytes of the body sent, keyed with the
 * destination's shared secret (SPEC section 4). Receivers recompute it over the raw request body.
 */
import { createHmac } from 'node:crypto';

export function signBody(sharedSecret: string, body: string): string {
  return createHmac('sha1', sharedSecret).update(body, 'utf8').digest('hex');
}
