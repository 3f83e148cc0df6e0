/**
 * Every error eventrelay raises on purpose carries a stable snake_case `code`, says whether trying
 * again can succeed (`retryable`), and, where it reaches an HTTP client, the status to answer with.
 * The registry below is the one list of codes; docs/errors.md mirrors it and a test keeps them equal.
 */
import type { FieldProblem } from './field-problems.js';

export const errorCodes = {
  invalid_request: {
    retryable: false,
    httpStatus: 400,
    summary:
      'The request body is not a JSON object of the expected shape (invalid JSON, invalid UTF-8, `batch` not an array, nesting too deep, unknown encoding), or an admin API request has a bad field (listed under `fields`).',
  },
  invalid_event: {
    retryable: false,
    httpStatus: 400,
    summary: 'A call is missing a required field or has a field of the wrong type; the message names the field.',
  },
  payload_too_large: {
    retryable: false,
    httpStatus: 400,
    summary: 'A single call over 32 KB, a batch over 500 KB or over 2500 items (sizes measured after inflation).',
  },
  missing_write_key: { retryable: false, httpStatus: 400, summary: 'No write key in HTTP Basic auth nor in the body.' },
  unknown_write_key: { retryable: false, httpStatus: 401, summary: 'The write key names no source.' },
  rate_limited: {
    retryable: true,
    httpStatus: 429,
    summary: "Over the source's calls-per-second limit (a batch counts each call); retry after `Retry-After` seconds.",
  },
  source_over_budget: {
    retryable: true,
    httpStatus: 429,
    summary:
      "The source's dedupe claims hold its whole budget of Redis memory (a share of maxmemory: memoryShare, or INGEST_SERVER_SOURCE_MEMORY_SHARE / INGEST_CLIENT_SOURCE_MEMORY_SHARE); nothing of the request was stored, and other sources are not affected. Room comes back as its claims expire: retry after `Retry-After` seconds.",
  },
  overloaded: {
    retryable: true,
    httpStatus: 503,
    summary:
      'Redis memory is past INGEST_REDIS_MEMORY_LIMIT_RATIO of its maxmemory; nothing of the request was stored; retry after `Retry-After` seconds.',
  },
  service_unavailable: {
    retryable: true,
    httpStatus: 503,
    summary:
      'Redis is unreachable or the router queue is over its depth limit; the calls may not have been stored; retry after `Retry-After` seconds (repeats are deduplicated).',
  },
  not_replicated: {
    retryable: true,
    httpStatus: 503,
    summary:
      'Durable mode (INGEST_DURABLE_REPLICAS): the calls were written to the primary but not confirmed on enough replicas within INGEST_DURABLE_TIMEOUT_MS; they may still be delivered; retry after `Retry-After` seconds (repeats are deduplicated).',
  },
  unauthorized: { retryable: false, httpStatus: 401, summary: 'An admin API request without a valid `Authorization: Bearer` token.' },
  not_found: { retryable: false, httpStatus: 404, summary: 'No route at that path, or no source or destination with that id.' },
  method_not_allowed: { retryable: false, httpStatus: 405, summary: 'The path exists but not for that HTTP method.' },
  conflict: {
    retryable: false,
    httpStatus: 409,
    summary: 'The admin API request contradicts the current state: an id already taken, or a replay while the destination is disabled.',
  },
  internal_error: { retryable: true, httpStatus: 500, summary: 'A defect in eventrelay; the request may be retried.' },
  invalid_env: {
    retryable: false,
    httpStatus: undefined,
    summary: 'An environment variable has a bad value; the process stops and names it.',
  },
  invalid_config: {
    retryable: false,
    httpStatus: undefined,
    summary:
      'The declarative config file (EVENTRELAY_CONFIG) is unreadable or invalid; the message names the path and field. Nothing is applied.',
  },
} as const satisfies Record<string, { retryable: boolean; httpStatus: number | undefined; summary: string }>;

export type ErrorCode = keyof typeof errorCodes;

export class EventrelayError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly httpStatus: number | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.retryable = errorCodes[code].retryable;
    this.httpStatus = errorCodes[code].httpStatus;
  }
}

/** The caller sent something we will never accept as it is. */
export class ValidationError extends EventrelayError {
  constructor(code: 'invalid_request' | 'invalid_event' | 'payload_too_large', message: string) {
    super(code, message);
  }
}

export class AuthError extends EventrelayError {
  constructor(code: 'missing_write_key' | 'unknown_write_key', message: string) {
    super(code, message);
  }
}

/** An admin API request we refuse; `fields` names each bad field of its body or query. */
export class RequestError extends EventrelayError {
  constructor(
    code: 'invalid_request' | 'unauthorized' | 'not_found' | 'conflict' | 'payload_too_large',
    message: string,
    readonly fields: readonly FieldProblem[] = [],
  ) {
    super(code, message);
  }
}

/** The same request can succeed later, and sending it again is safe. */
export class UnavailableError extends EventrelayError {
  constructor(
    code: 'rate_limited' | 'source_over_budget' | 'service_unavailable' | 'overloaded' | 'not_replicated',
    message: string,
    readonly retryAfterSeconds: number,
    options?: { cause?: unknown; resetAtEpochSeconds?: number; retryAtMs?: number },
  ) {
    super(code, message, options);
    this.retryAtMs = options?.retryAtMs;
    // The header's whole second, rounded up so that a client waiting until then is never early.
    this.resetAtEpochSeconds =
      options?.resetAtEpochSeconds ?? (this.retryAtMs === undefined ? undefined : Math.ceil(this.retryAtMs / 1000));
  }
  /** The X-RateLimit-Reset header: when (epoch seconds) the same request fits again; from retryAtMs unless given. */
  readonly resetAtEpochSeconds: number | undefined;
  /** The same, to the millisecond (Retry-After is whole seconds): how long ingest holds the answer. */
  readonly retryAtMs: number | undefined;
}

/** Bad start-up input (env or config file): the process must not start. */
export class ConfigError extends EventrelayError {
  constructor(code: 'invalid_env' | 'invalid_config', message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
