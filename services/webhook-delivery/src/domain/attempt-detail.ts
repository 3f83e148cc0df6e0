/**
 * What the attempt log keeps of one request and its answer (docs/delivery.md, "Attempt detail"):
 * excerpts, so a destination's log stays a bounded size whatever its calls and receivers send.
 * The static header values of a destination are write-only secrets, so the log shows where they
 * went, never what they were.
 */
import {
  RESERVED_WEBHOOK_HEADERS,
  type AttemptRequest,
  type AttemptResponse,
  type DeliveryAttempt,
  type DeliveryItem,
} from '@eventrelay/config';
import { classifyStatus, type ResponseExcerpt, type SendResult } from './outcome.js';

export const REQUEST_BODY_EXCERPT = 8 * 1024;
export const RESPONSE_BODY_EXCERPT = 1024;
const RESPONSE_HEADER_NAMES = 20;
const RESPONSE_HEADER_BYTES = 2 * 1024;
export const WRITE_ONLY = '[write-only]';

export function requestDetail(
  headers: Readonly<Record<string, string>>,
  staticHeaders: Readonly<Record<string, string>> | undefined,
  body: string,
): AttemptRequest {
  let shown = headers;
  if (staticHeaders !== undefined) {
    const copy = { ...headers };
    for (const name of Object.keys(staticHeaders)) {
      const key = name.toLowerCase();
      // A reserved name was overridden by eventrelay's own header (buildHeaders): that one is shown.
      if (!RESERVED_WEBHOOK_HEADERS.has(key) && key in copy) copy[key] = WRITE_ONLY;
    }
    shown = copy;
  }
  const excerpt = utf8Prefix(body, REQUEST_BODY_EXCERPT);
  return { method: 'POST', headers: shown, body: excerpt, ...(excerpt.length < body.length ? { bodyTruncated: true as const } : {}) };
}

export function responseDetail(response: ResponseExcerpt): AttemptResponse {
  const headers: Record<string, string> = {};
  let names = 0;
  let bytes = 0;
  for (const [name, raw] of Object.entries(response.headers)) {
    if (raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    if (names === RESPONSE_HEADER_NAMES || bytes + name.length + value.length > RESPONSE_HEADER_BYTES) break;
    headers[name] = value;
    names++;
    bytes += name.length + value.length;
  }
  const body = utf8Prefix(response.body, RESPONSE_BODY_EXCERPT);
  return { headers, body, ...(response.bodyTruncated || body.length < response.body.length ? { bodyTruncated: true as const } : {}) };
}

/** The longest prefix of `text` that is at most `max` bytes of UTF-8, never splitting a character. */
export function utf8Prefix(text: string, max: number): string {
  // Each UTF-16 unit is at most 3 bytes of UTF-8: short text needs no counting.
  if (text.length * 3 <= max) return text;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const surrogatePair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length;
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : surrogatePair ? 4 : 3;
    if (bytes + size > max) return text.slice(0, i);
    bytes += size;
    if (surrogatePair) i++;
  }
  return text;
}

/**
 * What the attempt log keeps of the request and its answer, and whose call it was: a deletion
 * regulation finds the entry by `userId` and erases its bodies (AttemptLog.eraseUsers). A delete
 * notice names the user being erased, so its bodies are never kept.
 */
/** DELIVERY_LOG_DETAIL: which attempts keep their request and answer in the attempt log. */
export type DetailLevel = 'all' | 'failures' | 'none';

/**
 * Whether an attempt keeps its detail: at `failures`, what a receiver refused or never answered is
 * what an operator reads. Nothing in the call can ask for more (a test send is marked in its
 * context, which any sender can write), so an operator's `none` holds for every call.
 */
export function keepsDetail(level: DetailLevel, outcome: 'success' | 'retryable' | 'permanent'): boolean {
  return level === 'all' || (level === 'failures' && outcome !== 'success');
}

/** keepsDetail by the answer's status, for the sender, which reads no excerpt it would throw away. */
export function keepsAnswer(level: DetailLevel): (status: number) => boolean {
  return (status) => keepsDetail(level, classifyStatus(status, undefined, 0).kind);
}

export function attemptDetail(
  call: DeliveryItem['call'],
  headers: Record<string, string>,
  staticHeaders: Record<string, string> | undefined,
  body: string,
  sent: SendResult,
): Pick<DeliveryAttempt, 'request' | 'response' | 'userId' | 'erased'> {
  const response = sent.kind === 'response' && sent.excerpt !== undefined ? responseDetail(sent.excerpt) : undefined;
  if (call.type === 'delete')
    return {
      request: requestDetail(headers, staticHeaders, ''),
      ...(response ? { response: { ...response, body: '' } } : {}),
      erased: true,
    };
  return {
    request: requestDetail(headers, staticHeaders, body),
    ...(response ? { response } : {}),
    ...(typeof call.userId === 'string' ? { userId: call.userId } : {}),
  };
}
