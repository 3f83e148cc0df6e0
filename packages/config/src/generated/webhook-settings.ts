/* Generated from schemas/webhook-settings.schema.json by scripts/gen-types.mjs. Do not edit: change the schema and run pnpm gen:types. */

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
