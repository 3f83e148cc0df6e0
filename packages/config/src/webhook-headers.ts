/**
 * Static headers configured for a webhook URL may not replace the headers eventrelay itself sets
 * (SPEC section 4): receivers rely on them to verify and dedupe, and Host/Content-Length would let a
 * setting break the HTTP framing.
 */
export const RESERVED_WEBHOOK_HEADERS: ReadonlySet<string> = new Set([
  'user-agent',
  'content-type',
  'x-signature',
  'x-eventrelay-message-id',
  'x-eventrelay-attempt',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
]);

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Problems with one URL's static headers, each naming the header; empty when they are fine. */
export function webhookHeaderProblems(headers: Readonly<Record<string, string>> | undefined, at: string): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!TOKEN.test(name)) problems.push(`${at}.headers has an invalid header name "${name}"`);
    else if (RESERVED_WEBHOOK_HEADERS.has(name.toLowerCase())) problems.push(`${at}.headers.${name} may not be set: eventrelay sets that header itself`);
    if (/[\r\n\0]/.test(value)) problems.push(`${at}.headers.${name} may not contain CR, LF or NUL`);
  }
  return problems;
}
