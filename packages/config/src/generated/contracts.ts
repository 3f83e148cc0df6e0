/* Generated from schemas/*.schema.json by scripts/gen-types.mjs. Do not edit: change a schema and run pnpm gen:types. */

/**
 * What a destination gets (docs/filters.md): rules applied in order. drop and only decide whether a call is sent at all (in the router, before any delivery job exists); dropFields and keepFields change what is sent of the calls that are.
 *
 * @maxItems 20
 */
export type DestinationFilters = FilterRule[];
/**
 * Work of the audiences service that is not driven by one call: a full pass over the profiles for one audience (its backfill on creation, or after its definition changed), or the periodic sync of every time-windowed audience.
 */
export type AudienceJob =
  | {
      kind: 'backfill';
      audienceId: string;
      /**
       * digest of the definition the pass is for; a pass for an outdated definition stops
       */
      fingerprint: string;
    }
  | {
      kind: 'periodic';
    };
/**
 * Calls for one Webhooks destination, on the webhook-delivery queue. A job the router makes holds every call of one route job bound for the destination by reference (`batch`: the calls stay in the call batch ingest wrote, read once by webhook-delivery); its id is `<destinationId>-<batchId>`. After the first round the calls that must be retried are held in the job itself (`calls`), each with its own retry state. Replays, audience identifies and delete notices are jobs of `calls` from the start.
 */
export type DeliverJob = BatchDeliverJob | HeldDeliverJob;

/**
 * Every contract type, one per schema file under schemas/.
 */
export interface Contracts {
  AdminApi: AdminApi;
  AudienceCondition: AudienceCondition;
  AudienceJob: AudienceJob;
  RouteEntry: RouteEntry;
  DeadLetter: DeadLetter;
  DeliverJob: DeliverJob;
  DeliveryAttempt: DeliveryAttempt;
  DestinationFilters: DestinationFilters;
  EventrelayConfig: EventrelayConfig;
  NormalizedCall: NormalizedCall;
  ProfileJob: ProfileJob;
  RegulationJob: RegulationJob;
  RouteJob: RouteJob;
  WebhookSettings: WebhookSettings;
}
/**
 * Request and response bodies of the admin API (docs/spec.md §6). The routes validate with these definitions and the OpenAPI document at /admin/v1/openapi.json is built from them.
 */
export interface AdminApi {
  sourceCreate?: SourceCreate;
  sourcePatch?: SourcePatch;
  destinationCreate?: DestinationCreate;
  destinationPatch?: DestinationPatch;
  destinationView?: DestinationView;
  secretRotation?: SecretRotation;
  secretRotated?: SecretRotated;
  previewRequest?: PreviewRequest;
  unsavedPreviewRequest?: UnsavedPreviewRequest;
  previewResult?: PreviewResult;
  catalogEntry?: CatalogEntry;
  replayRequest?: ReplayRequest;
  replayResult?: ReplayResult;
  deliveriesQuery?: DeliveriesQuery;
  pageQuery?: PageQuery;
  deliveryPage?: DeliveryPage;
  deadLetterPage?: DeadLetterPage;
  auditEntry?: AuditEntry;
  auditPage?: AuditPage;
  debugEvent?: DebugEvent;
  debugEventPage?: DebugEventPage;
  audienceCreate?: AudienceCreate;
  audienceView?: AudienceView;
  regulationCreate?: RegulationCreate;
  regulation?: Regulation;
  statsQuery?: StatsQuery;
  statsReport?: StatsReport;
  deadLettersQuery?: DeadLettersQuery;
  replayProgress?: ReplayProgress;
  testSendRequest?: TestSendRequest;
  testSendResult?: TestSendResult;
  consoleInfo?: ConsoleInfo;
  apiError?: ApiError;
}
/**
 * A new source. Its write key is generated; its id too unless given.
 */
export interface SourceCreate {
  /**
   * 1 to 64 letters, digits, _ or -
   */
  id?: string;
  name: string;
  type: 'web' | 'mobile' | 'server';
  rateLimitPerSecond?: number;
  memoryShare?: number;
}
/**
 * JSON merge patch of a source: the fields given replace the stored ones; rateLimitPerSecond or memoryShare null returns to the default.
 */
export interface SourcePatch {
  name?: string;
  type?: 'web' | 'mobile' | 'server';
  rateLimitPerSecond?: number | null;
  memoryShare?: number | null;
}
/**
 * A new destination of a catalog type. It starts disabled unless enabled is true.
 */
export interface DestinationCreate {
  /**
   * 1 to 64 letters, digits, _ or -
   */
  id?: string;
  name: 'Webhooks';
  enabled?: boolean;
  /**
   * Items: 1 to 64 letters, digits, _ or -
   */
  sourceIds?: string[];
  settings: WebhookSettings;
  filters?: DestinationFilters;
}
/**
 * Settings of one Webhooks destination (docs/spec.md §4).
 */
export interface WebhookSettings {
  /**
   * @minItems 1
   * @maxItems 5
   */
  webhooks: WebhookTarget[];
  /**
   * signs every request: X-Signature (HMAC-SHA1 of the body, keyed with the secret's UTF-8 bytes) and, with standardWebhooks, webhook-signature (HMAC-SHA256; a `whsec_` secret's key is its base64 part decoded, any other secret's key is its UTF-8 bytes)
   */
  sharedSecret?: string;
  previousSecret?: PreviousSecret;
  /**
   * also send the Standard Webhooks headers webhook-id, webhook-timestamp and webhook-signature (v1, HMAC-SHA256); needs sharedSecret
   */
  standardWebhooks?: boolean;
  /**
   * the whole attempt (connect, headers, body) must finish within this; default DELIVERY_TIMEOUT_MS (5000)
   */
  timeoutMs?: number;
  /**
   * how long after its first attempt a call is still retried (1 min to 72 h); default RETRY_WINDOW_MS (4 h)
   */
  retryWindowMs?: number;
  /**
   * requests open to this destination at once, per webhook-delivery process; default DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION (64). The adaptive limit moves below it
   */
  maxConcurrentRequests?: number;
  /**
   * requests started per second to this destination, across every webhook-delivery process; default no limit
   */
  maxRequestsPerSecond?: number;
  /**
   * disable the destination once its circuit has been open this long (1 min to 30 days); default never
   */
  autoDisableAfterMs?: number;
  mapping?: Mapping;
  batching?: Batching;
}
export interface WebhookTarget {
  /**
   * an absolute http or https URL
   */
  url: string;
  headers?: {
    [k: string]: string;
  };
  /**
   * true: no call is sent to this URL. Set by webhook-delivery when the URL answers 410 Gone (with disabledReason), or by an operator; false (or leaving the URL out and adding it again) re-enables it
   */
  disabled?: boolean;
  /**
   * why the URL was disabled, e.g. `answered 410 Gone at 2026-11-25T10:00:00.000Z`
   */
  disabledReason?: string;
}
/**
 * the secret before the last rotation, still signing until expiresAt (docs/receivers.md, "Rotating a secret")
 */
export interface PreviousSecret {
  secret: string;
  /**
   * ISO 8601 date-time
   */
  expiresAt: string;
}
/**
 * the body to send instead of docs/spec.md §4's, built from each call by this template (docs/filters.md, "Mappings"): JSON whose objects with an @ key are directives (@path, @template, @if, @coalesce, @literal); checked on save
 */
export interface Mapping {}
/**
 * send the calls of a delivery round together: one POST holds a JSON array of up to maxCalls bodies and maxBytes bytes (docs/filters.md, "Batched sending"); every call of a POST gets its outcome
 */
export interface Batching {
  /**
   * calls per POST; default 100
   */
  maxCalls?: number;
  /**
   * bytes of a POST's body; default 1048576 (1 MiB). A call whose body alone is larger is sent alone
   */
  maxBytes?: number;
}
/**
 * One rule: exactly one of drop (calls for which its condition holds are not sent), only (only calls for which its condition holds are sent), dropFields and keepFields; `if` narrows dropFields and keepFields to the calls it holds for (default every call).
 */
export interface FilterRule {
  /**
   * shown by preview and in a refused test send when the rule decides
   */
  name?: string;
  drop?: CallCondition;
  only?: CallCondition;
  /**
   * these fields are left out of what is sent (paths under properties, traits or context, or those objects whole)
   *
   * @minItems 1
   * @maxItems 100
   *
   * Items: a dot-separated path into the call, e.g. properties.plan or context.library.name (at most 10 names)
   */
  dropFields?: string[];
  /**
   * of properties, traits and context, only these fields are sent; the call's other fields (type, ids, event, name, timestamp) always are
   *
   * @minItems 1
   * @maxItems 100
   *
   * Items: a dot-separated path into the call, e.g. properties.plan or context.library.name (at most 10 names)
   */
  keepFields?: string[];
  if?: CallCondition;
}
/**
 * A test of one call: a tree of all / any / not over field tests and sampling. Each node is an object with exactly one of its keys.
 */
export interface CallCondition {
  /**
   * true when every condition is
   *
   * @minItems 1
   * @maxItems 50
   */
  all?: CallCondition[];
  /**
   * true when at least one condition is
   *
   * @minItems 1
   * @maxItems 50
   */
  any?: CallCondition[];
  not?: CallCondition;
  field?: FieldTest;
  sample?: SampleTest;
}
/**
 * A test of one field of the call, by path, with exactly one operator.
 */
export interface FieldTest {
  /**
   * a dot-separated path into the call, e.g. properties.plan or context.library.name (at most 10 names)
   */
  path: string;
  /**
   * compared with the field's value by JSON equality
   */
  equals?: string | number | boolean | null;
  /**
   * compared with the field's value by JSON equality
   */
  not_equals?: string | number | boolean | null;
  /**
   * true: the field is present (null counts as present); false: it is not
   */
  exists?: boolean;
  /**
   * a string field holds this text (case-sensitive), or an array field holds this value. A destination's filters hold at most 10 matches and contains tests in all, and so does a mapping: each reads the whole value
   */
  contains?: string | number | boolean;
  /**
   * a number compares with numeric fields; a string with string fields in code-unit order (ISO 8601 times of the same form compare as times)
   */
  gt?: string | number;
  /**
   * a number compares with numeric fields; a string with string fields in code-unit order (ISO 8601 times of the same form compare as times)
   */
  gte?: string | number;
  /**
   * a number compares with numeric fields; a string with string fields in code-unit order (ISO 8601 times of the same form compare as times)
   */
  lt?: string | number;
  /**
   * a number compares with numeric fields; a string with string fields in code-unit order (ISO 8601 times of the same form compare as times)
   */
  lte?: string | number;
  /**
   * the field equals one of these
   *
   * @minItems 1
   * @maxItems 500
   *
   * Items: compared with the field's value by JSON equality
   */
  in?: (string | number | boolean | null)[];
  /**
   * a string field begins with this text (case-sensitive)
   */
  starts_with?: string;
  /**
   * a string field matches this pattern as a whole: * any run of characters, ? one character, \ takes the next character as itself; case-sensitive, linear time. A string longer than 4096 characters never matches. A destination's filters hold at most 10 matches and contains tests in all, and so does a mapping
   */
  matches?: string;
}
/**
 * True for a stable share of users: the hash of the call's userId (its anonymousId when it has none) falls in the first `percent` of the range. A user is in or out for every call, on every process.
 */
export interface SampleTest {
  percent: number;
}
/**
 * JSON merge patch of a destination: fields given replace the stored ones (webhooks and sourceIds as whole lists); settings.sharedSecret null removes the secret, leaving it out keeps it; a header value given as its hint keeps the stored value; a webhook given without `disabled` keeps the disabled state stored for its URL; a numeric setting, previousSecret, mapping or batching given as null goes back to its default; filters are replaced as a whole list.
 */
export interface DestinationPatch {
  enabled?: boolean;
  /**
   * Items: 1 to 64 letters, digits, _ or -
   */
  sourceIds?: string[];
  settings?: {
    /**
     * the whole list; a header value may be given as the hint a read shows, which keeps the value stored for that header on the webhook with the same URL
     *
     * @minItems 1
     * @maxItems 5
     */
    webhooks?: WebhookTargetPatch[];
    sharedSecret?: string | null;
    /**
     * null ends a rotation's overlap now: only the current secret signs
     */
    previousSecret?: null;
    standardWebhooks?: boolean | null;
    timeoutMs?: number | null;
    retryWindowMs?: number | null;
    maxConcurrentRequests?: number | null;
    maxRequestsPerSecond?: number | null;
    autoDisableAfterMs?: number | null;
    mapping?: Mapping | null;
    batching?: Batching | null;
  };
  /**
   * the whole list; null or [] removes every rule
   */
  filters?: DestinationFilters | null;
}
export interface WebhookTargetPatch {
  /**
   * an absolute http or https URL
   */
  url: string;
  headers?: {
    [k: string]: string | SecretHint;
  };
  /**
   * true: no call is sent to this URL. Set by webhook-delivery when the URL answers 410 Gone (with disabledReason), or by an operator; false (or leaving the URL out and adding it again) re-enables it
   */
  disabled?: boolean;
  /**
   * why the URL was disabled, e.g. `answered 410 Gone at 2026-11-25T10:00:00.000Z`
   */
  disabledReason?: string;
}
/**
 * What a read shows of a write-only secret: whether one is set and, for secrets of 8 characters or more, its last 4.
 */
export interface SecretHint {
  set: boolean;
  last4?: string;
}
/**
 * A destination as the API returns it: the shared secret and every static header value replaced by a hint.
 */
export interface DestinationView {
  id: string;
  name: string;
  enabled: boolean;
  sourceIds: string[];
  settings: {
    webhooks: WebhookTargetView[];
    sharedSecret: SecretHint;
    previousSecret?: PreviousSecretView;
    standardWebhooks?: boolean;
    timeoutMs?: number;
    retryWindowMs?: number;
    maxConcurrentRequests?: number;
    maxRequestsPerSecond?: number;
    autoDisableAfterMs?: number;
    mapping?: {};
    batching?: Batching;
  };
  filters?: DestinationFilters;
}
export interface WebhookTargetView {
  url: string;
  /**
   * static header values are write-only: each is shown as a hint
   */
  headers?: {
    [k: string]: SecretHint;
  };
  disabled?: boolean;
  disabledReason?: string;
}
export interface PreviousSecretView {
  set: boolean;
  last4?: string;
  expiresAt: string;
}
/**
 * Rotates a destination's shared secret: the new secret signs from now on, and the current one keeps signing next to it for overlapMs (docs/receivers.md, "Rotating a secret").
 */
export interface SecretRotation {
  /**
   * the new secret; left out, one is generated (`whsec_` + 32 random bytes in base64) and shown once in the answer
   */
  secret?: string;
  /**
   * how long the current secret keeps signing next to the new one (0 to 7 days); default 86400000 (24 h). 0 replaces it at once
   */
  overlapMs?: number;
}
export interface SecretRotated {
  /**
   * the new secret, shown this once
   */
  secret: string;
  /**
   * when the secret it replaced stops signing; absent when there was none, or overlapMs was 0
   */
  previousExpiresAt?: string;
  destination: DestinationView;
}
/**
 * A sample call to preview against a destination (docs/filters.md, "Preview"): a call as the intake stores it; messageId, timestamp and receivedAt are filled in when left out.
 */
export interface PreviewRequest {
  call: Call;
  /**
   * the source the call comes from (it is part of webhook-id); default the destination's first, else `preview`
   */
  sourceId?: string;
}
/**
 * the call, e.g. {"type": "track", "event": "Order Completed", "userId": "u-1", "properties": {"total": 30}}
 */
export interface Call {}
/**
 * A preview for a destination that is not saved: its settings and filters as a create would give them.
 */
export interface UnsavedPreviewRequest {
  call: Call;
  /**
   * the source the call comes from (it is part of webhook-id); default the destination's first, else `preview`
   */
  sourceId?: string;
  destination: DestinationCreate;
}
/**
 * What the destination would do with the call: the filters' decision, the call as previewed (what was left out filled in) and, when it is sent, each request exactly as delivery would make its first attempt now.
 */
export interface PreviewResult {
  decision: PreviewDecision;
  call: NormalizedCall;
  /**
   * why the body cannot be built (a mapping whose output is too large): delivery would dead-letter the call
   */
  error?: string;
  /**
   * one per URL that is not disabled; empty when the call is not sent
   */
  requests: PreviewedRequest[];
}
export interface PreviewDecision {
  send: boolean;
  /**
   * the position in filters of the rule that refused the call
   */
  rule?: number;
  /**
   * that rule's name, when it has one
   */
  name?: string;
  /**
   * drop: its drop condition held; only: its only condition did not
   */
  reason?: 'drop' | 'only';
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
export interface PreviewedRequest {
  url: string;
  /**
   * eventrelay's headers as sent (signatures over this body); webhook-timestamp and the signatures that cover it change with the time of the attempt
   */
  headers: {
    [k: string]: string;
  };
  /**
   * the URL's static headers, sent too; values are write-only, so shown as hints
   */
  staticHeaders?: {
    [k: string]: SecretHint;
  };
  /**
   * the exact bytes of the body (UTF-8)
   */
  body: string;
}
export interface CatalogEntry {
  name: string;
  description: string;
  /**
   * JSON Schema of the destination's settings
   */
  settingsSchema: {};
}
/**
 * Which dead letters to deliver again, exactly one of: all of them, those of the given messageIds, those dead-lettered at or after a time (ISO 8601), or those a filter of the dead-letter list matches.
 */
export interface ReplayRequest {
  all?: true;
  /**
   * @minItems 1
   * @maxItems 1000
   */
  messageIds?: string[];
  since?: string;
  filter?: DeadLetterFilter;
}
/**
 * the dead letters GET /destinations/:id/dead-letters lists with the same q, since and until (every one that matches, not only a page)
 */
export interface DeadLetterFilter {
  /**
   * case-insensitive substring of the messageId, event name, call type or last error
   */
  q?: string;
  /**
   * dead-lettered at or after (ISO 8601)
   */
  since?: string;
  /**
   * dead-lettered at or before (ISO 8601)
   */
  until?: string;
}
export interface ReplayResult {
  /**
   * follow the replay with GET /destinations/:id/replays/:replayId
   */
  replayId: string;
  /**
   * dead letters put back on the delivery queue (and removed from the dead letters)
   */
  replayed: number;
  /**
   * requested messageIds with no dead letter
   */
  notFound: string[];
}
export interface DeliveriesQuery {
  /**
   * failed = retryable or permanent
   */
  status?: 'success' | 'failed' | 'retryable' | 'permanent';
  /**
   * the HTTP status class; none = no HTTP answer
   */
  statusClass?: '2xx' | '3xx' | '4xx' | '5xx' | 'none';
  /**
   * only this messageId (exact)
   */
  messageId?: string;
  /**
   * attempts at or after (ISO 8601)
   */
  since?: string;
  /**
   * attempts at or before (ISO 8601)
   */
  until?: string;
  limit?: number;
  /**
   * nextCursor of the previous page
   */
  cursor?: string;
}
export interface PageQuery {
  limit?: number;
  /**
   * nextCursor of the previous page
   */
  cursor?: string;
}
export interface DeliveryPage {
  items: DeliveryAttempt[];
  nextCursor: string | null;
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
  /**
   * the call's userId, kept so that a deletion regulation finds this entry and erases its bodies; absent for calls without one and for delete notices
   */
  userId?: string;
  /**
   * the request and response bodies are not kept: the call was a delete notice (its body names the user being erased), or a deletion regulation erased them
   */
  erased?: true;
  request?: AttemptRequest;
  response?: AttemptResponse;
}
/**
 * what was sent: the headers as sent, except that the value of each static header configured for the URL (write-only) is shown as "[write-only]"; the body, cut to its first 8 KiB
 */
export interface AttemptRequest {
  method: 'POST';
  headers: {
    [k: string]: string;
  };
  body: string;
  /**
   * present when the body was longer than the excerpt
   */
  bodyTruncated?: true;
}
/**
 * what the receiver answered, when an answer arrived: at most 20 headers (2 KiB in all), the first 1 KiB of the body (the rest is read, up to 64 KiB, and dropped, so the connection can be reused)
 */
export interface AttemptResponse {
  headers: {
    [k: string]: string;
  };
  body: string;
  /**
   * present when the body was longer than the excerpt
   */
  bodyTruncated?: true;
}
export interface DeadLetterPage {
  items: DeadLetter[];
  nextCursor: string | null;
}
/**
 * One call that no URL of its destination accepted within its retry window, or that every URL refused permanently; kept for inspection and replay. `job` is the call as replay re-enqueues it, in a job of its own.
 */
export interface DeadLetter {
  /**
   * the letter's id, derived from the destination, the source and the messageId (one letter per call and destination); also the job id a replay of it gets
   */
  jobId: string;
  job: DeadLetterCall;
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
 * the call and where it was going
 */
export interface DeadLetterCall {
  sourceId: string;
  destinationId: string;
  call: NormalizedCall | DeleteNotice;
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
  /**
   * the regulation that sent it, whose deletion receipt records what became of it (never in the body)
   */
  regulationId?: string;
}
/**
 * One write through the admin API, or one change the config file made at start.
 */
export interface AuditEntry {
  /**
   * ISO 8601 UTC
   */
  at: string;
  /**
   * which admin token: tok_ and the first 8 hex digits of its SHA-256; config-file for a change the EVENTRELAY_CONFIG file made at start
   */
  tokenId: string;
  /**
   * e.g. source.create, destination.update, destination.replay
   */
  action: string;
  targetId: string;
  /**
   * what changed (field names; secrets never)
   */
  details?: {};
}
export interface AuditPage {
  items: AuditEntry[];
  nextCursor: string | null;
}
/**
 * A call the intake accepted or rejected for a source, as the event debugger shows it.
 */
export interface DebugEvent {
  /**
   * when the intake received it, ISO 8601 UTC
   */
  at: string;
  outcome: 'accepted' | 'rejected';
  /**
   * why it was rejected
   */
  code?: string;
  message?: string;
  /**
   * the call (as normalized when accepted), fields that look like secrets replaced by "[redacted]"
   */
  call?: {};
}
export interface DebugEventPage {
  items: DebugEvent[];
  nextCursor: string | null;
}
/**
 * A new audience. Its id is generated unless given. Creating it sends one identify (trait true) for every current member among the profiles kept to its destinations; profiles are kept only from calls of sources some audience reads, so an audience gathers from when it exists.
 */
export interface AudienceCreate {
  /**
   * 1 to 64 letters, digits, _ or -
   */
  id?: string;
  /**
   * the membership trait is its snake_case form (docs/audiences.md); must hold a letter or digit, and no other audience may have the same trait
   */
  name: string;
  /**
   * the sources whose calls feed the audience
   *
   * @minItems 1
   *
   * Items: 1 to 64 letters, digits, _ or -
   */
  sourceIds: string[];
  /**
   * where membership changes are delivered, while enabled
   *
   * Items: 1 to 64 letters, digits, _ or -
   */
  destinationIds: string[];
  condition: AudienceCondition;
}
/**
 * Who is in an audience: a tree of all / any / not over trait and event tests, evaluated against a user's profile (docs/audiences.md). Each node is an object with exactly one of its keys. all: every condition holds; any: at least one does; not: the condition does not.
 */
export interface AudienceCondition {
  /**
   * true when every condition is
   *
   * @minItems 1
   * @maxItems 50
   */
  all?: AudienceCondition[];
  /**
   * true when at least one condition is
   *
   * @minItems 1
   * @maxItems 50
   */
  any?: AudienceCondition[];
  not?: AudienceCondition;
  trait?: TraitTest;
  event?: EventTest;
}
/**
 * A test of one top-level trait (the traits of the audience's sources merged, the latest identify winning): key and exactly one operator.
 */
export interface TraitTest {
  /**
   * a top-level trait name, matched exactly (a dot is part of the name)
   */
  key: string;
  /**
   * compared with the trait's value by JSON equality
   */
  equals?: string | number | boolean | null;
  /**
   * compared with the trait's value by JSON equality
   */
  not_equals?: string | number | boolean | null;
  /**
   * true: the trait is set (null counts as set); false: it is not
   */
  exists?: boolean;
  /**
   * a string trait holds this text (case-sensitive), or an array trait holds this value
   */
  contains?: string | number | boolean;
  /**
   * a number compares with numeric traits; a string compares with string traits in code-unit order (ISO 8601 dates of the same form compare as times)
   */
  gt?: string | number;
  /**
   * a number compares with numeric traits; a string compares with string traits in code-unit order (ISO 8601 dates of the same form compare as times)
   */
  gte?: string | number;
  /**
   * a number compares with numeric traits; a string compares with string traits in code-unit order (ISO 8601 dates of the same form compare as times)
   */
  lt?: string | number;
  /**
   * a number compares with numeric traits; a string compares with string traits in code-unit order (ISO 8601 dates of the same form compare as times)
   */
  lte?: string | number;
}
/**
 * The user sent the track event `name` at least `atLeast` times (from the audience's sources), in the last `withinDays` days when given.
 */
export interface EventTest {
  /**
   * the track call's event name, matched exactly
   */
  name: string;
  atLeast?: number;
  /**
   * the current UTC day and the withinDays - 1 days before it
   */
  withinDays?: number;
}
/**
 * An audience with its membership trait and how its membership stands.
 */
export interface AudienceView {
  id: string;
  name: string;
  sourceIds: string[];
  destinationIds: string[];
  condition: AudienceCondition;
  /**
   * the trait key of the identify calls this audience sends
   */
  traitKey: string;
  membership: AudienceMembership;
}
export interface AudienceMembership {
  /**
   * pending: the audiences service has not started on it yet; backfilling: the first pass over existing profiles is running; ready: every change is sent as it happens
   */
  status: 'pending' | 'backfilling' | 'ready';
  /**
   * users currently in the audience
   */
  members: number;
  /**
   * profiles evaluated by the running or last full pass
   */
  profilesScanned?: number;
  /**
   * when the last full pass (backfill or periodic sync) ended, ISO 8601 UTC
   */
  lastFullSyncAt?: string;
}
/**
 * A deletion or suppression request for users (docs/spec.md §6).
 */
export interface RegulationCreate {
  regulationType: 'DELETE' | 'SUPPRESS' | 'SUPPRESS_WITH_DELETE';
  subjectType: 'USER_ID';
  /**
   * @minItems 1
   * @maxItems 5000
   */
  subjectIds: string[];
  /**
   * the sources it applies to; every source when left out
   *
   * @minItems 1
   *
   * Items: 1 to 64 letters, digits, _ or -
   */
  sourceIds?: string[];
}
/**
 * A regulation and how far it has got. The subject ids are not shown: they are personal data, and are forgotten once the regulation has finished.
 */
export interface Regulation {
  id: string;
  regulationType: 'DELETE' | 'SUPPRESS' | 'SUPPRESS_WITH_DELETE';
  subjectType: 'USER_ID';
  subjectCount: number;
  /**
   * as requested; left out means every source
   */
  sourceIds?: string[];
  status: 'pending' | 'running' | 'finished';
  createdAt: string;
  finishedAt?: string;
  counts: {
    /**
     * subjects fully handled
     */
    subjectsDone: number;
    /**
     * delete notifications put on the delivery queue (one per subject, affected source and enabled Webhooks destination)
     */
    deleteNotices: number;
    /**
     * subjects that had a profile, now erased
     */
    profilesErased: number;
    /**
     * subjects whose later calls the router now drops
     */
    suppressed?: number;
  };
  receipts?: DeletionReceipts;
}
/**
 * DELETE and SUPPRESS_WITH_DELETE only: what became of the regulation's delete notices, in all and per destination. Each notice counts once, under its last outcome (a dead-lettered notice replayed and delivered moves to delivered; a delivered one stays delivered). pending = notices not yet delivered, dead-lettered or dropped: queued, or retrying.
 */
export interface DeletionReceipts {
  /**
   * delete notices planned so far
   */
  notices: number;
  /**
   * accepted (2xx) by one of the destination's URLs
   */
  delivered: number;
  /**
   * dead-lettered: the destination refused them, was disabled, or never answered within the retry window
   */
  deadLettered: number;
  /**
   * dropped because the destination was deleted
   */
  dropped: number;
  pending: number;
  /**
   * one per destination a notice was planned for, by destination id
   */
  destinations: DeletionReceipt[];
}
/**
 * The delete notices of one regulation to one destination, by outcome.
 */
export interface DeletionReceipt {
  destinationId: string;
  notices: number;
  delivered: number;
  deadLettered: number;
  dropped: number;
  pending: number;
}
export interface StatsQuery {
  /**
   * hour = 60 one-minute buckets, day = 144 ten-minute buckets
   */
  window?: 'hour' | 'day';
}
/**
 * Per destination and source, what happened in each bucket of the window, oldest first; the last bucket is the current one, still filling. Counted by the services once a second: a bucket may lag the moment by about a second.
 */
export interface StatsReport {
  window: 'hour' | 'day';
  bucketSeconds: 60 | 600;
  /**
   * ISO 8601
   */
  generatedAt: string;
  /**
   * the start of each bucket (ISO 8601), oldest first
   */
  buckets: string[];
  /**
   * every destination, by id
   */
  destinations: DestinationStats[];
  /**
   * every source, by id
   */
  sources: SourceStats[];
}
/**
 * One destination's deliveries over the window: each series has one entry per bucket.
 */
export interface DestinationStats {
  id: string;
  name: string;
  /**
   * the destination's catalog entry
   */
  type: string;
  enabled: boolean;
  series: {
    /**
     * calls delivered (a round accepted by every URL due)
     */
    delivered: number[];
    /**
     * calls whose round failed and that will be tried again
     */
    retrying: number[];
    /**
     * calls dead-lettered
     */
    deadLettered: number[];
    /**
     * HTTP requests made
     */
    attempts: number[];
    /**
     * HTTP requests that did not succeed
     */
    failedAttempts: number[];
    /**
     * mean end-to-end lag (intake to delivery) of the calls delivered, ms; null when none was
     */
    lagMsAvg: (number | null)[];
    /**
     * largest end-to-end lag of the calls delivered, ms; null when none was
     */
    lagMsMax: (number | null)[];
  };
  totals: {
    delivered: number;
    retrying: number;
    deadLettered: number;
    attempts: number;
    failedAttempts: number;
    /**
     * failedAttempts / attempts; null without attempts
     */
    errorRatio: number | null;
    lagMsAvg: number | null;
    lagMsMax: number | null;
  };
}
/**
 * One source's intake over the window: each series has one entry per bucket.
 */
export interface SourceStats {
  id: string;
  name: string;
  series: {
    /**
     * calls accepted (duplicates included)
     */
    accepted: number[];
    /**
     * calls rejected: invalid, or refused with their request (rate limit, overload)
     */
    rejected: number[];
  };
  totals: {
    accepted: number;
    rejected: number;
    /**
     * (accepted + rejected) / the window's minutes
     */
    callsPerMinute: number;
  };
}
export interface DeadLettersQuery {
  /**
   * case-insensitive substring of the messageId, event name, call type or last error
   */
  q?: string;
  /**
   * dead-lettered at or after (ISO 8601)
   */
  since?: string;
  /**
   * dead-lettered at or before (ISO 8601)
   */
  until?: string;
  limit?: number;
  /**
   * nextCursor of the previous page
   */
  cursor?: string;
}
/**
 * What became of the calls of one replay (kept 7 days): each counts once, under its final outcome.
 */
export interface ReplayProgress {
  replayId: string;
  destinationId: string;
  /**
   * ISO 8601 UTC
   */
  startedAt: string;
  /**
   * calls put back on the delivery queue
   */
  replayed: number;
  /**
   * accepted by a URL
   */
  delivered: number;
  /**
   * dead-lettered again
   */
  deadLettered: number;
  /**
   * replayed - delivered - deadLettered: queued or retrying
   */
  pending: number;
}
export interface TestSendRequest {
  type: 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias';
  /**
   * one of the destination's sources; default its first
   */
  sourceId?: string;
}
export interface TestSendResult {
  /**
   * test-<random>; the attempt shows in GET /destinations/:id/deliveries?messageId=
   */
  messageId: string;
  sourceId: string;
  call: NormalizedCall;
}
export interface ConsoleInfo {
  /**
   * the eventrelay version
   */
  version: string;
  /**
   * the intake's public base URL (ADMIN_INTAKE_URL)
   */
  intakeUrl: string;
}
export interface ApiError {
  success: false;
  /**
   * see docs/errors.md
   */
  code: string;
  message: string;
  fields?: {
    field: string;
    message: string;
  }[];
}
/**
 * What the router needs of one call of a call batch, stored in the batch beside the calls themselves so that routing never reads whole calls: where it comes from, what it is, who it is about, its integrations, and what a profile takes of it. The call itself is in the batch field `c<part>`, the calls its source sent in the flush as one JSON array, at position index - part.
 */
export interface RouteEntry {
  /**
   * the call's number in the flush (calls are numbered source by source)
   */
  index: number;
  /**
   * the number of the first call of its source in the flush: the batch field c<part> holds that source's calls
   */
  part: number;
  sourceId: string;
  messageId: string;
  type: 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias';
  userId?: string;
  integrations?: {
    [k: string]: unknown;
  };
  /**
   * the call's event: a track call's, or one another call carries (filters test it)
   */
  event?: string;
  /**
   * identify only, when it has a userId (profiles)
   */
  traits?: {
    [k: string]: unknown;
  };
  /**
   * ISO 8601 UTC, clock-skew corrected
   */
  timestamp: string;
}
/**
 * The first round of the calls of one route job bound for one destination: the calls are read from the call batch.
 */
export interface BatchDeliverJob {
  destinationId: string;
  batch: BatchRef;
  /**
   * epoch ms: the job was parked until its requests' turn at the destination's rate (the adaptive rate of the process, and the maxRequestsPerSecond slots taken in Redis); back in time for it, the job sends without booking again. The commit that follows drops it
   */
  turnAt?: number;
}
/**
 * The calls of a call batch bound for this destination, by source (each source's calls of the flush are one field of the batch).
 */
export interface BatchRef {
  /**
   * the call batch (and route job) id
   */
  id: string;
  /**
   * @minItems 1
   */
  parts: {
    /**
     * the batch field c<part> holding the source's calls
     */
    part: number;
    sourceId: string;
    /**
     * the calls' numbers in the flush (position in the part: index - part)
     *
     * @minItems 1
     */
    indexes: number[];
  }[];
}
/**
 * Calls held in the job itself, each with its retry state: the calls of a batch job still to be retried after its first round, a replayed dead letter, an audience identify, a delete notice.
 */
export interface HeldDeliverJob {
  destinationId: string;
  /**
   * @minItems 1
   */
  calls: DeliveryItem[];
  /**
   * rounds the job went through (parks not counted); with BullMQ's attemptsStarted it tells how often the job was parked
   */
  runs?: number;
  /**
   * calls of this job counted in its destination's retry backlog (`<prefix>:retry-held`, DELIVERY_RETRY_MAX_PER_DESTINATION); written by every commit, with the count, in one MULTI. Absent on a job no commit wrote yet (a replay, an audience identify, a delete notice): none of its calls is counted
   */
  counted?: number;
  /**
   * bytes of this job's calls counted in its destination's retry backlog (`<prefix>:retry-held-bytes`, DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION): the sum over its held calls of each one's JSON without its retry state, plus 200 bytes for that state (so a call counts the same at every round), written by every commit with the byte total in the same MULTI. Absent on a job no commit wrote yet, and on one last written before the byte cap existed: none of its bytes is counted (its next commit counts them all)
   */
  countedBytes?: number;
  /**
   * epoch ms: the job was parked until its requests' turn at the destination's rate (the adaptive rate of the process, and the maxRequestsPerSecond slots taken in Redis); back in time for it, the job sends without booking again. The commit that follows drops it
   */
  turnAt?: number;
}
/**
 * One call held in a delivery job, with what its earlier rounds left.
 */
export interface DeliveryItem {
  sourceId: string;
  call: NormalizedCall | DeleteNotice;
  retry?: RetryState;
  /**
   * the replay (POST /admin/v1/destinations/:id/replay) that put this call back on the queue; its final outcome is counted in that replay's progress
   */
  replayId?: string;
}
/**
 * Written by webhook-delivery for a call after an attempt round that neither delivered it nor ended it.
 */
export interface RetryState {
  /**
   * epoch ms of the call's first attempt; its retry window counts from here
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
 * The declarative config file named by EVENTRELAY_CONFIG: applied at start as an idempotent upsert.
 */
export interface EventrelayConfig {
  $schema?: string;
  sources?: Source[];
  destinations?: Destination[];
  audiences?: Audience[];
}
export interface Source {
  /**
   * 1 to 64 letters, digits, _ or -
   */
  id: string;
  name: string;
  type: 'web' | 'mobile' | 'server';
  /**
   * 8 to 128 letters, digits, _ or -
   */
  writeKey: string;
  /**
   * calls per second this source may send to the intake (a batch counts each of its calls); default INGEST_RATE_LIMIT for a server source, INGEST_CLIENT_RATE_LIMIT for a web or mobile one
   */
  rateLimitPerSecond?: number;
  /**
   * share of Redis's maxmemory this source's dedupe claims may hold (its budget, docs/intake.md); default INGEST_SERVER_SOURCE_MEMORY_SHARE for a server source, INGEST_CLIENT_SOURCE_MEMORY_SHARE for a web or mobile one
   */
  memoryShare?: number;
}
export interface Destination {
  /**
   * 1 to 64 letters, digits, _ or -
   */
  id: string;
  name: 'Webhooks';
  enabled: boolean;
  /**
   * Items: 1 to 64 letters, digits, _ or -
   */
  sourceIds: string[];
  settings: WebhookSettings;
  filters?: DestinationFilters;
}
export interface Audience {
  /**
   * 1 to 64 letters, digits, _ or -
   */
  id: string;
  /**
   * the membership trait is its snake_case form (docs/audiences.md); must hold a letter or digit
   */
  name: string;
  /**
   * the sources whose calls feed the audience (the admin API asks for at least one; deleting a source removes it here); a user with no identify or track from any of them is never a member
   *
   * Items: 1 to 64 letters, digits, _ or -
   */
  sourceIds: string[];
  /**
   * where membership changes are delivered (as identify calls), when enabled
   *
   * Items: 1 to 64 letters, digits, _ or -
   */
  destinationIds: string[];
  condition: AudienceCondition;
}
/**
 * router → audiences: the identify and track calls with a userId of one routed call batch, by source (suppressed users' calls are not among them), to update profiles and audience membership.
 */
export interface ProfileJob {
  sourceId: string;
  /**
   * @minItems 1
   */
  calls: ProfileCall[];
}
/**
 * What a profile needs of a call.
 */
export interface ProfileCall {
  type: 'identify' | 'track';
  messageId: string;
  userId: string;
  /**
   * ISO 8601 UTC, clock-skew corrected
   */
  timestamp: string;
  /**
   * identify only
   */
  traits?: {
    [k: string]: unknown;
  };
  /**
   * track only
   */
  event?: string;
}
/**
 * admin → audiences: one regulation to carry out. The subject ids live only here (the job is deleted when it finishes) and in the router's suppression list.
 */
export interface RegulationJob {
  /**
   * also the BullMQ job id
   */
  id: string;
  /**
   * ISO 8601 UTC; the timestamp of the delete notifications
   */
  createdAt: string;
  request: RegulationCreate;
}
/**
 * One ingest flush on the router's queue: the calls ingest accepted within one short window, from every source, stored once in the call batch of the same id (written with this job in one MULTI). The job carries only the reference.
 */
export interface RouteJob {
  /**
   * letters, digits, - and _; also the BullMQ job id
   */
  batchId: string;
}
