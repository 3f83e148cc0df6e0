/**
 * Delivery attempts as the log and the test send show them: the answer's excerpt and the
 * signature header the receiver checks.
 */
import type { DeliveryAttempt } from '@eventrelay/config';

export type { DeliveryAttempt };

const SIGNATURE_HEADER = 'x-signature';

export function signatureOf(a: DeliveryAttempt): string | undefined {
  const headers = a.request?.headers ?? {};
  const name = Object.keys(headers).find((h) => h.toLowerCase() === SIGNATURE_HEADER);
  return name === undefined ? undefined : headers[name];
}

export function excerpt(text: string | undefined, max = 300): string {
  if (!text) return '';
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export function statusText(a: DeliveryAttempt): string {
  return a.status === undefined ? `no answer${a.error ? ` (${a.error})` : ''}` : `HTTP ${a.status}`;
}

/**
 * A call's first attempt at each URL, in the order of `urls`, from its attempts as the log lists
 * them (newest first); URLs not tried yet are left out.
 */
export function firstRound(attempts: readonly DeliveryAttempt[], urls: readonly string[]): DeliveryAttempt[] {
  const first = new Map<string, DeliveryAttempt>();
  for (const a of attempts) if (a.attempt === 1) first.set(a.url, a);
  return urls.flatMap((url) => first.get(url) ?? []);
}
