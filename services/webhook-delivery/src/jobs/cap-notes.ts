/**
 * What a per-destination cap did in a commit, for operators: the letters the dead-letter cap
 * evicted and the calls the retry backlog cap dead-lettered, counted in the metrics; the first of
 * an episode (the stores mark one per destination per hour, in the commit's MULTI) also gets one
 * operator event (a warning, an audit entry, a notification: operator-events.ts).
 */
import type { Logger } from '@eventrelay/runtime';
import type { DeadLetterStore, RetryBacklog } from '@eventrelay/stores';
import type { DeliveryMetrics } from '../metrics.js';
import type { OperatorEvents } from './operator-events.js';

interface CapNoteDeps {
  readonly deadLetters: Pick<DeadLetterStore, 'evictionOf'>;
  readonly retryBacklog: Pick<RetryBacklog, 'changeOf'>;
  readonly events: OperatorEvents;
  readonly deadLetterMax: number;
  readonly retryMax: number;
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
    for (const answer of answers) {
      const e = deps.deadLetters.evictionOf(answer);
      evicted += e.evicted;
      began ||= e.episodeBegan;
    }
    if (evicted === 0) return;
    deps.metrics.deadLettersEvicted.inc({ destination: destinationId }, evicted);
    if (began)
      await deps.events.record(
        'destination.dead_letters_evicted',
        destinationId,
        { reason: 'dead letter cap reached', max: deps.deadLetterMax, evicted },
        'delivery.dead_letters_evicting',
      );
  }

  /**
   * Counts the calls the retry backlog cap dead-lettered and, when this began an episode of them,
   * writes one audit entry and one log line for it.
   */
  async function noteRetryBacklog(destinationId: string, answer: unknown, capped: number): Promise<void> {
    const change = deps.retryBacklog.changeOf(answer);
    // Only a count lowered by hand while jobs still held counted calls goes below 0 (the field is
    // then removed): say so, the count is low by that much until those jobs are done.
    if (change.held < 0) deps.logger.warn({ destinationId, held: change.held }, 'delivery.retry_count_below_zero');
    if (capped === 0) return;
    deps.metrics.retryCapped.inc({ destination: destinationId }, capped);
    if (change.episodeBegan)
      await deps.events.record(
        'destination.retry_backlog_capped',
        destinationId,
        { reason: 'retry backlog cap reached', max: deps.retryMax, deadLettered: capped },
        'delivery.retry_backlog_capped',
      );
  }

  return { noteEvictions, noteRetryBacklog };
}
