/* Generated from schemas/normalized-call.schema.json by scripts/gen-types.mjs. Do not edit: change the schema and run pnpm gen:types. */

export type CallType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias';

/**
 * A tracking call after ingest validated and normalized it. Unknown top-level keys are kept as sent.
 */
export interface NormalizedCall {
  type: CallType;
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
