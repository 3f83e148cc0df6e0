/* Generated from schemas/*.schema.json by scripts/gen-types.mjs. Do not edit: change a schema and run pnpm gen:types. */

/**
 * Every contract type, one per schema file under schemas/.
 */
export interface Contracts {
  EventrelayConfig: EventrelayConfig;
  NormalizedCall: NormalizedCall;
  RouteJob: RouteJob;
  WebhookSettings: WebhookSettings;
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
