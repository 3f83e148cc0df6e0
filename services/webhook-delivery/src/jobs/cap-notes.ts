/**
 * What a per-destination cap did in a commit, for operators: the letters the dead-letter caps
 * evicted and the calls the retry backlog caps dead-lettered, counted in the metrics; the first of
 * an episode (the stores mark one per destination per hour, in the commit's MULTI) also gets one
 * operator event (a warning, an audit entry, a notification: operator-events.ts). Each has a cap
 * on count and one on bytes; either is told the same way, its `reason` naming which.
 */
import type { Logger } from '@eventrelay/runtime';
import type { DeadLetterStore, RetryBacklog } from '@eventrelay/stores';
import type { DeliveryMetrics } from '../metrics.js';
import type { OperatorEvents } from './operator-events.js';
import type { RetryCap } from '../domain/retry-cap.js';

/** Calls of a commit dead-lettered at a retry backlog cap, and which cap. */
export interface RetryCapped {
  readonly calls: number;
  readonly by?: RetryCap['by'] | undefined;
}

export const NOT_CAPPED: RetryCapped = { calls: 0 };

interface CapNoteDeps {
  readonly deadLetters: Pick<DeadLetterStore, 'evictionOf'>;
  readonly retryBacklog: Pick<RetryBacklog, 'changeOf'>;
  readonly events: OperatorEvents;
  readonly deadLetterMax: number;
  readonly deadLetterMaxBytes: number;
  readonly retryMax: number;
  readonly retryMaxBytes: number;
  readonly metrics: DeliveryMetrics;
  readonly logger: Logger;
}

export function createCapNotes(deps: CapNoteDeps) {
  /**
   * Counts the letters the commit evicted (the destination was at its cap) and, when this began an
   * episode of evictions, writes one audit entry and one log line for it.
   */
  async function noteEvictions(destinationId: string, answers: readonly unknown[]): Promise<void> {
    let evicted = 0;
    let began = false;
    let byBytes = false;
    let bytes = 0;
    for (const answer of answers) {
      const e = deps.deadLetters.evictionOf(answer);
      evicted += e.evicted;
      began ||= e.episodeBegan;
      byBytes ||= e.byBytes;
      bytes = e.bytes;
    }
    if (evicted === 0) return;
    deps.metrics.deadLettersEvicted.inc({ destination: destinationId }, evicted);
    if (began)
      await deps.events.record(
        'destination.dead_letters_evicted',
        destinationId,
        {
          reason: byBytes ? 'dead letter byte cap reached' : 'dead letter cap reached',
          max: deps.deadLetterMax,
          maxBytes: deps.deadLetterMaxBytes,
          evicted,
          bytes,
        },
        'delivery.dead_letters_evicting',
      );
  }

  /**
   * Counts the calls the retry backlog cap dead-lettered and, when this began an episode of them,
   * writes one audit entry and one log line for it.
   */
  async function noteRetryBacklog(destinationId: string, answer: unknown, capped: RetryCapped): Promise<void> {
    const change = deps.retryBacklog.changeOf(answer);
    // Only a total lowered by hand while jobs still held counted calls goes below 0 (the field is
    // then removed): say so, the total is low by that much until those jobs are done.
    if (change.held < 0 || change.bytes < 0)
      deps.logger.warn({ destinationId, held: change.held, bytes: change.bytes }, 'delivery.retry_count_below_zero');
    if (capped.calls === 0) return;
    deps.metrics.retryCapped.inc({ destination: destinationId }, capped.calls);
    if (change.episodeBegan)
      await deps.events.record(
        'destination.retry_backlog_capped',
        destinationId,
        {
          reason: capped.by === 'bytes' ? 'retry backlog byte cap reached' : 'retry backlog cap reached',
          max: deps.retryMax,
          maxBytes: deps.retryMaxBytes,
          deadLettered: capped.calls,
        },
        'delivery.retry_backlog_capped',
      );
  }

  return { noteEvictions, noteRetryBacklog };
}
