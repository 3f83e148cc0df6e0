/**
 * What every group of admin routes shares: the dependencies, and the steps each route takes the
 * same way (the write context of the audit entry, a config read or compare-and-set write, cursor
 * checks).
 */
import { RequestError, type ConfigPlan, type ConfigSnapshot, type ConsoleInfo, type RegulationJob } from '@eventrelay/config';
import type {
  AttemptLog,
  AuditLog,
  ConfigStore,
  DeadLetterStore,
  DeletionReceipts,
  RegulationStore,
  ReplayProgressStore,
  SourceEvents,
  StatsCounters,
} from '@eventrelay/stores';
import type { AudienceStatus } from '../../adapters/audience-status.js';
import type { IntakeQueue } from '../../adapters/intake-queue.js';
import type { Replayer } from '../../adapters/replayer.js';
import type { WriteContext } from '../../domain/write-context.js';
import type { AdminRequest, Answer } from '../route-spec.js';

export interface AdminDeps {
  readonly store: Pick<ConfigStore, 'snapshot' | 'update'>;
  readonly attempts: Pick<AttemptLog, 'page'>;
  readonly deadLetters: Pick<DeadLetterStore, 'page'>;
  readonly replayer: Pick<Replayer, 'replay'>;
  /** What became of each replay's calls. */
  readonly replays: Pick<ReplayProgressStore, 'read'>;
  /** The route queue, for test sends. */
  readonly intake: Pick<IntakeQueue, 'route'>;
  /** What the console shows of this installation. */
  readonly info: ConsoleInfo;
  readonly audit: Pick<AuditLog, 'page' | 'record'>;
  readonly events: Pick<SourceEvents, 'page'>;
  readonly audienceStatus: Pick<AudienceStatus, 'read'>;
  readonly regulations: Pick<RegulationStore, 'create' | 'get'>;
  /** What became of each deletion's delete notices, per destination. */
  readonly receipts: Pick<DeletionReceipts, 'read'>;
  /** The per-minute counts webhook-delivery and ingest keep, read for the stats. */
  readonly stats: Pick<StatsCounters, 'read'>;
  /** Hands a regulation to the audiences service (the regulation queue, job id = regulation id). */
  readonly queueRegulation: (job: RegulationJob) => Promise<void>;
  readonly clock: () => number;
  /** A new random id, e.g. `src_1f3a…`. */
  readonly newId: (kind: 'src' | 'dst' | 'aud' | 'reg' | 'rpl') => string;
  /** A new random messageId for a test send, `test-…`. */
  readonly newTestMessageId: () => string;
  /** A new write key: long and random. */
  readonly newWriteKey: () => string;
  /** A new destination secret for a rotation that gives none: `whsec_` and 32 random bytes. */
  readonly newSecret: () => string;
  /** The OpenAPI document, built from these routes. */
  readonly openApi: () => unknown;
}

export interface RouteKit {
  readonly deps: AdminDeps;
  /** Who writes, and when: the audit entry's context. */
  readonly ctx: (req: AdminRequest) => WriteContext;
  /** Plans against a snapshot and commits with one compare-and-set (planned again when another writer won). */
  readonly write: <R>(plan: (snapshot: ConfigSnapshot) => ConfigPlan<R>) => Promise<R>;
  readonly read: <R>(pick: (snapshot: ConfigSnapshot) => R) => Promise<R>;
  /** 400 unless the cursor is one of the capped logs' (attempt log, event debugger, audit). */
  readonly logCursor: (cursor: string | undefined) => void;
  /** 400 unless `valid`. */
  readonly cursorProblem: (valid: boolean) => void;
}

export function routeKit(deps: AdminDeps): RouteKit {
  const cursorProblem = (valid: boolean) => {
    if (!valid)
      throw new RequestError('invalid_request', 'cursor is not one this API gave out', [
        { field: 'cursor', message: 'is not one this API gave out' },
      ]);
  };
  return {
    deps,
    ctx: (req) => ({ tokenId: req.token.id, now: new Date(deps.clock()).toISOString() }),
    write: (plan) => deps.store.update(plan),
    read: async (pick) => pick(await deps.store.snapshot()),
    logCursor: (cursor) => cursorProblem(cursor === undefined || /^\d{1,18}$/.test(cursor)),
    cursorProblem,
  };
}

export const ok = (body: unknown): Answer => ({ status: 200, body });

export function param(req: AdminRequest, name: string): string {
  return req.params[name] ?? '';
}

export function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
