/**
 * What one attempt at one URL means for the message (docs/spec.md §4, outcome table). The sender
 * reports what happened in these terms; only the worker turns the verdict into queue behaviour.
 */
import { parseRetryAfter } from './retry-after.js';

/** Why an attempt got no HTTP response. The sender maps Node and undici errors onto these. */
const SEND_FAILURES = [
  'timeout',
  'connection_refused',
  'connection_reset',
  'dns_failure',
  'network_error',
  'tls_untrusted',
  'address_refused',
  'invalid_url',
  'invalid_request',
] as const;
export type SendFailure = (typeof SEND_FAILURES)[number];

export type Outcome =
  | { readonly kind: 'success'; readonly status: number }
  | { readonly kind: 'retryable'; readonly error: string; readonly status?: number; readonly retryAfterMs?: number }
  | { readonly kind: 'permanent'; readonly error: string; readonly status?: number };

/** What the sender read of an answer: its headers as the HTTP client gives them, the body's first bytes. */
export interface ResponseExcerpt {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
  readonly bodyTruncated: boolean;
}

export type SendResult =
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly retryAfter?: string | undefined;
      /** What the attempt log keeps of the answer. */
      readonly excerpt?: ResponseExcerpt;
    }
  | { readonly kind: 'failure'; readonly failure: SendFailure; readonly detail: string };

export function classify(result: SendResult, now: number): Outcome {
  return result.kind === 'response'
    ? classifyStatus(result.status, result.retryAfter, now)
    : classifyFailure(result.failure, result.detail);
}

export function classifyStatus(status: number, retryAfter: string | undefined, now: number): Outcome {
  if (status >= 200 && status < 300) return { kind: 'success', status };
  if (status >= 500 || status === 408 || status === 429) {
    const retryAfterMs = parseRetryAfter(retryAfter, now);
    return retryAfterMs === undefined
      ? { kind: 'retryable', error: `HTTP ${status}`, status }
      : { kind: 'retryable', error: `HTTP ${status}`, status, retryAfterMs };
  }
  // 3xx: redirects are never followed (a redirect could lead past the SSRF guard); 1xx cannot
  // reach here as a final status; other 4xx say the request itself is wrong.
  return {
    kind: 'permanent',
    error: status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`,
    status,
  };
}

export function classifyFailure(failure: SendFailure, detail: string): Outcome {
  switch (failure) {
    case 'timeout':
    case 'connection_refused':
    case 'connection_reset':
    case 'dns_failure':
    case 'network_error':
      return { kind: 'retryable', error: `${failure}: ${detail}` };
    case 'tls_untrusted':
    case 'address_refused':
    case 'invalid_url':
    case 'invalid_request':
      return { kind: 'permanent', error: `${failure}: ${detail}` };
  }
}

/**
 * The metrics label of an attempt: `2xx` … `5xx` when a response came, else why none came (the
 * SendFailure that classifyFailure put before the colon of the error).
 */
export function statusClass(attempt: { readonly status?: number | undefined; readonly error?: string | undefined }): string {
  if (attempt.status !== undefined) return `${Math.floor(attempt.status / 100)}xx`;
  const failure = attempt.error?.split(':', 1)[0];
  return (SEND_FAILURES as readonly string[]).includes(failure ?? '') ? (failure as string) : 'error';
}
