/**
 * The headers of one attempt. Static headers come first so that the ones eventrelay sets always
 * win; saving a destination already rejects static headers that would collide.
 */
import { signBody } from './signature.js';

export const USER_AGENT = 'Eventrelay/1.0';

export interface HeaderInput {
  readonly body: string;
  readonly messageId: string;
  readonly attempt: number;
  readonly sharedSecret?: string | undefined;
  readonly staticHeaders?: Readonly<Record<string, string>> | undefined;
}

export function buildHeaders(input: HeaderInput): Record<string, string> {
  const headers: Record<string, string> = { ...input.staticHeaders };
  headers['user-agent'] = USER_AGENT;
  headers['content-type'] = 'application/json';
  if (input.sharedSecret !== undefined) headers['x-signature'] = signBody(input.sharedSecret, input.body);
  headers['x-eventrelay-message-id'] = input.messageId;
  headers['x-eventrelay-attempt'] = String(input.attempt);
  return headers;
}
