/* Generated from schemas/*.schema.json by scripts/gen-types.mjs. Do not edit: change a schema and run pnpm gen:types. */

/**
 * Every contract type, one per schema file under schemas/.
 */
export interface Contracts {
  DeadLetter: DeadLetter;
  DeliverJob: DeliverJob;
  DeliveryAttempt: DeliveryAttempt;
  EventrelayConfig: EventrelayConfig;
  NormalizedCall: NormalizedCall;
  RouteJob: RouteJob;
  WebhookSettings: WebhookSettings;
}
/**
 * A message no URL of its destination accepted within the retry window, or that every URL refused permanently; kept for inspection and replay. `job` is what replay re-enqueues, without its retry state.
 */
export interface DeadLetter {
  jobId: string;
  job: DeliverJob;
  /**
   * attempt rounds made; 0 when the destination was disabled before any
   */
  attempts: number;
  lastError: string;
  urls: {
    url: string;
    error: string;
  }[];
  /**
   * ISO 8601 UTC
   */
  firstAttemptAt: string;
  /**
   * ISO 8601 UTC
   */
  deadAt: string;
}
/**
 * One call (or deletion notice) for one Webhooks destination, on the webhook-delivery queue. Its job id is derived from the destination id, the source id and the messageId, so routing a call twice delivers it once.
 */
export interface DeliverJob {
  sourceId: string;
  destinationId: string;
  call: NormalizedCall | DeleteNotice;
  retry?: RetryState;
}
/**
 * A tracking call after ingest validated and normalized it. Unknown top-level keys are kept as sent.
 */
export interface NormalizedCall {
  type: 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias';
  messageId: string;
  userId?: string;
  anonymousId?: string;
  /**
   * track only
   */
  event?: string;
  /**
   * page and screen
   */
  name?: string;
  /**
   * page
   */
  category?: string;
  /**
   * group only
   */
  groupId?: string;
  /**
   * alias only
   */
  previousId?: string;
  properties?: {
    [k: string]: unknown;
  };
  traits?: {
    [k: string]: unknown;
  };
  context?: {
    [k: string]: unknown;
  };
  integrations?: {
    [k: string]: unknown;
  };
  /**
   * ISO 8601 UTC with milliseconds, clock-skew corrected
   */
  timestamp: string;
  /**
   * the client's own timestamp, ISO 8601 UTC
   */
  originalTimestamp?: string;
  /**
   * when the client sent it, ISO 8601 UTC
   */
  sentAt?: string;
  /**
   * server time at intake, ISO 8601 UTC
   */
  receivedAt: string;
  [k: string]: unknown;
}
/**
 * Sent once per affected source when a DELETE or SUPPRESS_WITH_DELETE regulation is created.
 */
export interface DeleteNotice {
  type: 'delete';
  messageId: string;
  userId: string;
  /**
   * ISO 8601 UTC with milliseconds
   */
  timestamp: string;
}
/**
 * Written by webhook-delivery after an attempt round that neither succeeded nor ended the message.
 */
export interface RetryState {
  /**
   * epoch ms of the first attempt; the retry window counts from here
   */
  firstAttemptAt: number;
  /**
   * attempt rounds made so far
   */
  attempt: number;
  /**
   * by URL, what its last attempt left
   */
  urls: {
    [k: string]: UrlRetryState;
  };
}
export interface UrlRetryState {
  lastError: string;
  /**
   * true once the URL failed permanently: it is not tried again
   */
  failed?: boolean;
  /**
   * epoch ms before which the URL is not tried again (backoff or Retry-After)
   */
  notBefore?: number;
}
/**
 * One attempt at one URL, as kept in the capped per-destination attempt log (newest first).
 */
export interface DeliveryAttempt {
  destinationId: string;
  sourceId: string;
  messageId: string;
  url: string;
  attempt: number;
  outcome: 'success' | 'retryable' | 'permanent';
  /**
   * HTTP status, when a response arrived
   */
  status?: number;
  /**
   * what went wrong, when the outcome is not success
   */
  error?: string;
  latencyMs: number;
  /**
   * when the attempt started, ISO 8601 UTC
   */
  at: string;
}
/**
 * The declarative config file named by EVENTRELAY_CONFIG: applied at start as an idempotent upsert.
 */
export interface EventrelayConfig {
  $schema?: string;
  sources?: Source[];
  destinations?: Destination[];
  audiences?: Audience[];
}
export interface Source {
  id: string;
  name: string;
  type: 'web' | 'mobile' | 'server';
  writeKey: string;
  /**
   * requests per second this source may send to the intake; default INGEST_RATE_LIMIT
   */
  rateLimitPerSecond?: number;
}
export interface Destination {
  id: string;
  name: 'Webhooks';
  enabled: boolean;
  sourceIds: string[];
  settings: WebhookSettings;
}
/**
 * Settings of one Webhooks destination (SPEC section 4).
 */
export interface WebhookSettings {
  /**
   * @minItems 1
   * @maxItems 5
   */
  webhooks: WebhookTarget[];
  sharedSecret?: string;
}
export interface WebhookTarget {
  url: string;
  headers?: {
    [k: string]: string;
  };
}
export interface Audience {
  id: string;
  name: string;
  sourceIds: string[];
  destinationIds: string[];
  /**
   * evaluated by the audiences feature; its grammar is defined there
   */
  condition: {
    [k: string]: unknown;
  };
}
/**
 * One accepted intake request on the router's queue: every call of it that passed validation and dedupe.
 */
export interface RouteJob {
  sourceId: string;
  /**
   * also the BullMQ job id
   */
  requestId: string;
  /**
   * @minItems 1
   */
  calls: NormalizedCall[];
}
