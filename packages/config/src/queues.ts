/**
 * The one catalog of queues: name, payload type and default job options. Producers and workers are
 * typed from it, so renaming a queue or changing a payload breaks the build wherever it is used.
 * Names contain no ":" because BullMQ joins prefix, name and key parts with ":".
 */
import type { AudienceJob, DeliverJob, ProfileJob, RegulationJob, RouteJob } from './generated/contracts.js';

export interface QueueDefinition<Payload> {
  readonly name: string;
  readonly jobName: string;
  /**
   * Split into EVENTRELAY_SHARDS queues, one per shard prefix (docs/deployment.md, "Redis
   * Cluster"); the others live under the home prefix only.
   */
  readonly sharded: boolean;
  readonly defaultJobOptions: {
    readonly attempts: number;
    readonly backoff: { readonly type: 'exponential'; readonly delay: number };
    readonly removeOnComplete: true | { readonly age: number; readonly count: number };
    readonly removeOnFail: { readonly age: number };
  };
  /** Type-level only: ties the payload type to the queue. */
  readonly payload?: Payload;
}

const DAY_S = 24 * 60 * 60;

export const queueCatalog = {
  /**
   * ingest → router: one job per ingest flush (the calls accepted within a few ms, from every
   * source), holding only the id of the call batch written with it.
   */
  route: {
    name: 'route',
    jobName: 'route',
    sharded: true,
    defaultJobOptions: {
      // The router's work is Redis-only, so a failure means Redis trouble: retry for about 17 minutes.
      attempts: 12,
      backoff: { type: 'exponential', delay: 500 },
      // A finished route job is deleted at once: routing it again changes nothing (the batch's
      // route entries are gone once it is routed), so there is nothing to remember it for.
      removeOnComplete: true,
      removeOnFail: { age: 7 * DAY_S },
    },
  } satisfies QueueDefinition<RouteJob> as QueueDefinition<RouteJob>,

  /**
   * router → webhook-delivery: one job per (route job, destination) holding that destination's
   * calls of the batch; also single-call jobs for replays, audience identifies and delete notices.
   * webhook-delivery schedules the retries of a job's calls itself (backoff, Retry-After, each
   * call's retry window) by moving the job to the delayed set with the calls still to go, so
   * BullMQ's own attempts only cover defects and Redis trouble inside a job.
   */
  deliver: {
    name: 'deliver',
    jobName: 'deliver',
    sharded: true,
    defaultJobOptions: {
      attempts: 15,
      backoff: { type: 'exponential', delay: 1000 },
      // A finished delivery job is deleted at once: what stops a call routed twice from being
      // delivered twice is the batch (its route entries and each destination's hold), and for
      // single-call jobs a deduplication key of a few dozen bytes with a TTL.
      removeOnComplete: true,
      removeOnFail: { age: 7 * DAY_S },
    },
  } satisfies QueueDefinition<DeliverJob> as QueueDefinition<DeliverJob>,

  /** router → audiences: the identify and track calls of one routed request, for profiles. */
  profile: {
    name: 'profile',
    jobName: 'profile',
    sharded: true,
    defaultJobOptions: {
      // Redis-only work, like routing: retry for about 17 minutes. A retry applies each call once
      // (the profile remembers the latest messageIds).
      attempts: 12,
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: true,
      removeOnFail: { age: 7 * DAY_S },
    },
  } satisfies QueueDefinition<ProfileJob> as QueueDefinition<ProfileJob>,

  /** audiences → audiences: full passes over the profiles (backfills, the periodic sync). */
  audience: {
    name: 'audience',
    jobName: 'audience',
    sharded: false,
    defaultJobOptions: {
      // A pass keeps its cursor in Redis, so a retry goes on where the failed attempt stopped;
      // retried for about an hour of Redis trouble.
      attempts: 12,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: true,
      removeOnFail: { age: 7 * DAY_S },
    },
  } satisfies QueueDefinition<AudienceJob> as QueueDefinition<AudienceJob>,

  /**
   * admin → audiences: one regulation (deletion or suppression request). Every step is
   * idempotent, so a retry redoes the unfinished part; retried for about 12 days of Redis trouble
   * before it is failed, because a privacy request must not be dropped quietly.
   */
  regulation: {
    name: 'regulation',
    jobName: 'regulation',
    sharded: false,
    defaultJobOptions: {
      attempts: 20,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: true,
      removeOnFail: { age: 30 * DAY_S },
    },
  } satisfies QueueDefinition<RegulationJob> as QueueDefinition<RegulationJob>,
} as const;

export type QueueKey = keyof typeof queueCatalog;
export type PayloadOf<K extends QueueKey> = (typeof queueCatalog)[K] extends QueueDefinition<infer P> ? P : never;
