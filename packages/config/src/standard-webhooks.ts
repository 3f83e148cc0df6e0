/**
 * Standard Webhooks signing (standardwebhooks.com, "v1"): HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`, base64, sent as `v1,<signature>` in
 * `webhook-signature` (several space-separated while a rotation overlaps). Used for a destination's
 * deliveries when it sets `standardWebhooks`, and for the operator notifications.
 */
import { createHmac } from 'node:crypto';

const PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The HMAC key of a secret: a `whsec_` secret's base64 part decoded (what the official libraries
 * do with such a secret), any other secret's UTF-8 bytes (a receiver passes it as a raw key).
 */
export function standardWebhooksKey(secret: string): Buffer {
  const rest = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : undefined;
  if (rest !== undefined && rest.length > 0 && rest.length % 4 === 0 && BASE64.test(rest)) return Buffer.from(rest, 'base64');
  return Buffer.from(secret, 'utf8');
}

/**
 * True for a secret the official libraries would read differently from us: `whsec_` followed by
 * something that is not base64 (they decode it anyway; we would sign with its UTF-8 bytes).
 */
export function isMalformedWhsec(secret: string): boolean {
  if (!secret.startsWith(PREFIX)) return false;
  const rest = secret.slice(PREFIX.length);
  return !(rest.length > 0 && rest.length % 4 === 0 && BASE64.test(rest));
}

/** One `v1,<base64>` signature of a message. */
export function standardWebhooksSignature(key: Buffer, id: string, timestampSec: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSec}.`, 'utf8').update(body, 'utf8').digest('base64')}`;
}
