export * from './errors.js';
export * from './env.js';
export * from './queues.js';
export * from './schemas.js';
export * from './config-file.js';
export * from './webhook-headers.js';
export * from './field-problems.js';
export * from './config-changes.js';
export * from './destination-catalog.js';
export type {
  NormalizedCall,
  RouteJob,
  DeliverJob,
  DeleteNotice,
  RetryState,
  UrlRetryState,
  DeliveryAttempt,
  DeadLetter,
  WebhookSettings,
  WebhookTarget,
  EventrelayConfig,
  Source,
  Destination,
  Audience,
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
