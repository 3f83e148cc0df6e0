export {
  AuthError,
  ConfigError,
  EventrelayError,
  RequestError,
  UnavailableError,
  ValidationError,
  errorCodes,
  type ErrorCode,
} from './errors.js';
export {
  DEFAULT_SENTINEL_NAME,
  EnvProblem,
  commonEnv,
  custom,
  describeEnv,
  integer,
  loadEnvFrom,
  oneOf,
  port,
  text,
  type EnvOf,
  type EnvSource,
  type EnvVar,
  type SentinelAddress,
} from './env.js';
export { queueCatalog, type PayloadOf, type QueueKey } from './queues.js';
export { asKeyspace, consumedShards, keySlot, keyspace, type Keyspace } from './shards.js';
export {
  adminBodyValidator,
  adminQueryValidator,
  contractSchemas,
  schemaProblems,
  validateNormalizedCall,
  type AdminApiDefinition,
} from './schemas.js';
export { checkConfig, parseConfigText, type ValidConfig } from './config-file.js';
export { RESERVED_WEBHOOK_HEADERS } from './webhook-headers.js';
export { SIGNATURE_HEADER, signBody, verifySignature } from './signature.js';
export { standardWebhooksKey, standardWebhooksSignature } from './standard-webhooks.js';
export { describeProblem, type FieldProblem } from './field-problems.js';
export { emptySnapshot, exportConfig, planUpsert, type ConfigChange, type ConfigPlan, type ConfigSnapshot } from './config-changes.js';
export { MAX_BODY_DEPTH, bodyDepthProblem } from './json-depth.js';
export { planConfigFile, type ConfigFileMode, type ConfigFileOutcome } from './config-file-plan.js';
export { destinationCatalog, destinationType } from './destination-catalog.js';
export { previousSecretInForce } from './destinations/webhooks.js';
export type {
  NormalizedCall,
  RouteJob,
  RouteEntry,
  DeliverJob,
  HeldDeliverJob,
  BatchRef,
  DeliveryItem,
  DeleteNotice,
  RetryState,
  UrlRetryState,
  DeliveryAttempt,
  DeadLetter,
  WebhookTarget,
  Source,
  Destination,
  Audience,
  AudienceCondition,
  TraitTest,
  AudienceCreate,
  AudienceView,
  AudienceMembership,
  ProfileJob,
  ProfileCall,
  AudienceJob,
  RegulationJob,
  RegulationCreate,
  Regulation,
  DeletionReceipt,
  SourceCreate,
  SourcePatch,
  DestinationCreate,
  DestinationPatch,
  DestinationView,
  PreviousSecret,
  SecretRotation,
  SecretRotated,
  PreviewRequest,
  UnsavedPreviewRequest,
  PreviewResult,
  PreviewedRequest,
  SecretHint,
  WebhookTargetPatch,
  WebhookTargetView,
  CatalogEntry,
  ReplayRequest,
  ReplayResult,
  ReplayProgress,
  DeadLetterFilter,
  DeadLettersQuery,
  TestSendRequest,
  TestSendResult,
  ConsoleInfo,
  AttemptRequest,
  AttemptResponse,
  DeliveriesQuery,
  PageQuery,
  AuditEntry,
  DebugEvent,
  StatsQuery,
  StatsReport,
  DestinationStats,
  SourceStats,
  Batching,
  DestinationFilters,
  FilterRule,
  CallCondition,
} from './generated/contracts.js';
export { traitKey } from './audiences/trait-key.js';
export { audienceProblems } from './audiences/audience-rules.js';
export { batchDeliveryJobId, callDeliveryId } from './delivery-ids.js';
export { ROUTE_ENTRY_CALL_FIELDS, routeEntryOf } from './route-entry.js';
export { heldFromLegacyDeliverJob, legacyRouteJob, type LegacyRouteJob } from './legacy-jobs.js';
export { audienceFingerprint } from './audiences/fingerprint.js';
export { parsePassState, type PassState } from './audiences/pass-state.js';
export { newRegulation } from './audiences/regulation-record.js';
export {
  attemptMatches,
  deadLetterMatches,
  isFiltering,
  parseInstant,
  type AttemptFilter,
  type DeadLetterFilterOf,
} from './delivery-filters.js';
export { buildBody } from './webhook-request/body.js';
export { USER_AGENT, buildHeaders } from './webhook-request/headers.js';
export { batchBody, batchDeliveryId, batchGroups, callBody, type CallBody } from './webhook-request/request.js';
export type { CallLike } from './filters/call-condition.js';
export { compileFilters, filtersOf, filtersProblems } from './filters/destination-filters.js';
export { mappingProblems } from './mapping/mapping-rules.js';
export { compileValueTest } from './filters/value-test.js';
