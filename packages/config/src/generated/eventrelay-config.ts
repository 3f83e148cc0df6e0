/* Generated from schemas/eventrelay-config.schema.json by scripts/gen-types.mjs. Do not edit: change the schema and run pnpm gen:types. */

export type Id = string;

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
  id: Id;
  name: string;
  type: 'web' | 'mobile' | 'server';
  writeKey: string;
  /**
   * requests per second this source may send to the intake; default INGEST_RATE_LIMIT
   */
  rateLimitPerSecond?: number;
}
export interface Destination {
  id: Id;
  name: 'Webhooks';
  enabled: boolean;
  sourceIds: Id[];
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
  id: Id;
  name: string;
  sourceIds: Id[];
  destinationIds: Id[];
  /**
   * evaluated by the audiences feature; its grammar is defined there
   */
  condition: {
    [k: string]: unknown;
  };
}
