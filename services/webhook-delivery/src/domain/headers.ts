/**
 * The headers of one attempt. Saving a destination already rejects static headers that would
 * collide with ours, but this does not rely on it: static headers are lowercased and reserved
 * names dropped, so the headers eventrelay sets always win, however a name is spelled.
 */
import { RESERVED_WEBHOOK_HEADERS, signBody } from '@eventrelay/config';

export const USER_AGENT = 'Eventrelay/1.0';

export interface HeaderInput {
  readonly body: string;
  readonly messageId: string;
  readonly attempt: number;
  readonly sharedSecret?: string | undefined;
  readonly staticHeaders?: Readonly<Record<string, string>> | undefined;
}

export function buildHeaders(input: HeaderInput): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.staticHeaders ?? {})) {
    const key = name.toLowerCase();
    if (!RESERVED_WEBHOOK_HEADERS.has(key)) headers[key] = value;
  }
  headers['user-agent'] = USER_AGENT;
  headers['content-type'] = 'application/json';
  if (input.sharedSecret !== undefined) headers['x-signature'] = signBody(input.sharedSecret, input.body);
  headers['x-eventrelay-message-id'] = input.messageId;
  headers['x-eventrelay-attempt'] = String(input.attempt);
  return headers;
}
