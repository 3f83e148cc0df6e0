export * from './errors.js';
export * from './env.js';
export * from './queues.js';
export * from './schemas.js';
export * from './config-file.js';
export * from './webhook-headers.js';
export { SIGNATURE_HEADER, signBody, verifySignature } from './signature.js';
export * from './field-problems.js';
export * from './config-changes.js';
export * from './destination-catalog.js';
export type {
  NormalizedCall,
  RouteJob,
  RouteEntry,
  DeliverJob,
  BatchDeliverJob,
  HeldDeliverJob,
  BatchRef,
  DeliveryItem,
  DeleteNotice,
  RetryState,
  UrlRetryState,
  DeliveryAttempt,
  DeadLetter,
  DeadLetterCall,
  WebhookSettings,
  WebhookTarget,
  EventrelayConfig,
  Source,
  Destination,
  Audience,
  AudienceCondition,
  TraitTest,
  EventTest,
  AudienceCreate,
  AudienceView,
  AudienceMembership,
  ProfileJob,
  ProfileCall,
  AudienceJob,
  RegulationJob,
  RegulationCreate,
  Regulation,
  SourceCreate,
  SourcePatch,
  DestinationCreate,
  DestinationPatch,
  DestinationView,
  SecretHint,
  CatalogEntry,
  ReplayRequest,
  ReplayResult,
  DeliveriesQuery,
  PageQuery,
  DeliveryPage,
  DeadLetterPage,
  AuditEntry,
  AuditPage,
  DebugEvent,
  DebugEventPage,
  ApiError,
} from './generated/contracts.js';
export * from './audiences/trait-key.js';
export * from './audiences/audience-rules.js';
export * from './delivery-ids.js';
export * from './route-entry.js';
export * from './legacy-jobs.js';
export * from './audiences/fingerprint.js';
export * from './audiences/pass-state.js';
export * from './audiences/regulation-record.js';
