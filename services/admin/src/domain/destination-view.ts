/** A destination as the admin API shows it: the shared secret is write-only. */
import type { Destination, DestinationView, SecretHint } from '@eventrelay/config';

/** Below this length the last 4 characters would give away too much of the secret. */
const HINT_MIN_LENGTH = 8;

export function toDestinationView(destination: Destination): DestinationView {
  const { sharedSecret, ...settings } = destination.settings;
  return { ...destination, settings: { ...settings, sharedSecret: secretHint(sharedSecret) } };
}

function secretHint(secret: string | undefined): SecretHint {
  if (secret === undefined) return { set: false };
  return secret.length >= HINT_MIN_LENGTH ? { set: true, last4: secret.slice(-4) } : { set: true };
}
