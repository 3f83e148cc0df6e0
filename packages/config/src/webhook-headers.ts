/**
 * Static headers configured for a webhook URL may not replace the headers eventrelay itself sets
 * (docs/spec.md §4): receivers rely on them to verify and dedupe; Host, Content-Length and the
 * connection-level headers would let a setting break the HTTP framing (and the HTTP client refuses
 * them, which would otherwise only show as failed attempts).
 */
import type { FieldProblem } from './field-problems.js';

export const RESERVED_WEBHOOK_HEADERS: ReadonlySet<string> = new Set([
  'user-agent',
  'content-type',
  'x-signature',
  'x-eventrelay-message-id',
  'x-eventrelay-attempt',
  // Sent only while a secret rotation overlaps; the prefix below already refuses it at save time,
  // and listing it drops one stored before that rule so it never shows outside an overlap.
  'x-eventrelay-signature-next',
  'x-eventrelay-batch-size',
  // Standard Webhooks (a destination's standardWebhooks setting): a static one would forge them.
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
]);

/** Every header eventrelay adds starts with this, including ones a later version may add. */
const OWN_HEADER_PREFIX = 'x-eventrelay-';

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Problems with one URL's static headers, each naming the header; empty when they are fine. */
export function webhookHeaderProblems(headers: Readonly<Record<string, string>> | undefined, at: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    const field = `${at}.headers.${name}`;
    const lower = name.toLowerCase();
    if (!TOKEN.test(name)) problems.push({ field, message: "is not a valid HTTP header name (letters, digits and !#$%&'*+.^_`|~- only)" });
    else if (RESERVED_WEBHOOK_HEADERS.has(lower) || lower.startsWith(OWN_HEADER_PREFIX))
      problems.push({ field, message: 'may not be set: eventrelay or the HTTP connection controls that header' });
    // What HTTP/1.1 allows in a field value: tab, visible ASCII, space and obs-text (Latin-1).
    if (/[^\t\x20-\x7e\x80-\xff]/.test(value))
      problems.push({
        field,
        message: 'may hold only printable Latin-1 text (no control characters such as CR or LF, nor characters beyond U+00FF)',
      });
  }
  return problems;
}
