/**
 * The headers of one attempt. Saving a destination already rejects static headers that would
 * collide with ours, but this does not rely on it: static headers are lowercased and reserved
 * names dropped, so the headers eventrelay sets always win, however a name is spelled.
 *
 * Signatures (docs/receivers.md): X-Signature always; with `standardWebhooks` also webhook-id,
 * webhook-timestamp and webhook-signature. While a rotation overlaps, X-Signature stays on the
 * previous secret (a receiver that has not switched keeps verifying), the new secret's goes in
 * X-Eventrelay-Signature-Next, and webhook-signature carries both, as Standard Webhooks allows.
 */
import { callDeliveryId } from '../delivery-ids.js';
import { previousSecretInForce } from '../destinations/webhooks.js';
import type { PreviousSecret } from '../generated/contracts.js';
import { signBody } from '../signature.js';
import { standardWebhooksKey, standardWebhooksSignature } from '../standard-webhooks.js';
import { RESERVED_WEBHOOK_HEADERS } from '../webhook-headers.js';

export const USER_AGENT = 'Eventrelay/1.0';

export interface HeaderInput {
  readonly body: string;
  /** The call's messageId; for a batched POST, its batchDeliveryId. */
  readonly messageId: string;
  /** Set for a batched POST: how many calls its array holds (X-Eventrelay-Batch-Size). */
  readonly batchSize?: number | undefined;
  readonly attempt: number;
  readonly sharedSecret?: string | undefined;
  readonly staticHeaders?: Readonly<Record<string, string>> | undefined;
  /**
   * What the signing options of a destination need beyond its secret. Left out, neither a
   * previous secret nor the Standard Webhooks headers are sent: X-Signature alone, as before.
   */
  readonly signing?: SigningInput | undefined;
}

export interface SigningInput {
  readonly destinationId: string;
  readonly sourceId: string;
  /**
   * The attempt's time (ms since the epoch, from the injected clock): webhook-timestamp, and
   * whether `previousSecret` still signs.
   */
  readonly now: number;
  readonly previousSecret?: PreviousSecret | undefined;
  readonly standardWebhooks?: boolean | undefined;
}

export function buildHeaders(input: HeaderInput): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.staticHeaders ?? {})) {
    const key = name.toLowerCase();
    if (!RESERVED_WEBHOOK_HEADERS.has(key)) headers[key] = value;
  }
  const secret = input.sharedSecret;
  const signing = input.signing;
  const previous =
    secret !== undefined && signing !== undefined ? previousSecretInForce(signing.previousSecret, signing.now)?.secret : undefined;
  headers['user-agent'] = USER_AGENT;
  headers['content-type'] = 'application/json';
  if (secret !== undefined) headers['x-signature'] = signBody(previous ?? secret, input.body);
  if (secret !== undefined && previous !== undefined) headers['x-eventrelay-signature-next'] = signBody(secret, input.body);
  headers['x-eventrelay-message-id'] = input.messageId;
  headers['x-eventrelay-attempt'] = String(input.attempt);
  if (input.batchSize !== undefined) headers['x-eventrelay-batch-size'] = String(input.batchSize);
  // Settings refuse standardWebhooks without a secret; an unsigned webhook-* set would only
  // make receivers reject every call, so none is sent then.
  if (secret !== undefined && signing?.standardWebhooks === true) {
    // The same on every attempt of the call, so receivers dedupe on it as on the message id.
    const id = input.batchSize === undefined ? callDeliveryId(signing.destinationId, signing.sourceId, input.messageId) : input.messageId;
    const timestamp = Math.floor(signing.now / 1000);
    const sign = (s: string) => standardWebhooksSignature(standardWebhooksKey(s), id, timestamp, input.body);
    headers['webhook-id'] = id;
    headers['webhook-timestamp'] = String(timestamp);
    headers['webhook-signature'] = previous === undefined ? sign(secret) : `${sign(secret)} ${sign(previous)}`;
  }
  return headers;
}
