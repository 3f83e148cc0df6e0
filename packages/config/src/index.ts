export * from './errors.js';
export * from './env.js';
export * from './queues.js';
export * from './schemas.js';
export * from './config-file.js';
export * from './webhook-headers.js';
export type { NormalizedCall, RouteJob, WebhookSettings, WebhookTarget, EventrelayConfig, Source, Destination, Audience } from './generated/contracts.js';
