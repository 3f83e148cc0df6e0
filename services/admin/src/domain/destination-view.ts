/**
 * A destination as the admin API shows it: the shared secret and every static header value are
 * write-only (a header often carries the receiver's credentials, e.g. `Authorization`).
 */
import type { Destination, DestinationView, SecretHint, WebhookTargetView } from '@eventrelay/config';

/** Below this length the last 4 characters would give away too much of the secret. */
const HINT_MIN_LENGTH = 8;

export function toDestinationView(destination: Destination): DestinationView {
  const { sharedSecret, previousSecret, webhooks, ...settings } = destination.settings;
  return {
    ...destination,
    settings: {
      ...settings,
      webhooks: webhooks.map(webhookView),
      sharedSecret: secretHint(sharedSecret),
      ...(previousSecret ? { previousSecret: { ...secretHint(previousSecret.secret), expiresAt: previousSecret.expiresAt } } : {}),
    },
  };
}

function webhookView({ headers, ...webhook }: Destination['settings']['webhooks'][number]): WebhookTargetView {
  if (headers === undefined) return webhook;
  return { ...webhook, headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, secretHint(value)])) };
}

function secretHint(secret: string | undefined): SecretHint {
  if (secret === undefined) return { set: false };
  return secret.length >= HINT_MIN_LENGTH ? { set: true, last4: secret.slice(-4) } : { set: true };
}
