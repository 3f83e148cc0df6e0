export * from './errors.js';
export * from './env.js';
export * from './queues.js';
export * from './schemas.js';
export * from './config-file.js';
export * from './webhook-headers.js';
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
} from './generated/contracts.js';
