/**
 * Rounds sent whose commit has not landed, by job, in this process's memory (docs/delivery.md, "A
 * full Redis"). A job whose commit Redis refused runs again (in place, after a wait, or later when
 * it comes back to this process) and commits the kept round instead of sending its calls again.
 * Bounded: a job taken over by another process (this one shut down while holding it) is never
 * asked for again, so the oldest rounds make room; losing one costs at most one more send of its
 * calls, which is what any crash before a commit costs.
 */
import type { DeliverJob } from '@eventrelay/config';
import { sentFrom } from '../domain/sent-round.js';

export interface SentRound<R> {
  readonly from: string;
  readonly round: R;
}

export class SentRounds<R> {
  private readonly rounds = new Map<string, SentRound<R>>();

  constructor(private readonly max: number) {}

  /** Keeps the round `jobId` just sent from `data`, until its commit lands. */
  keep(jobId: string, data: DeliverJob, round: R): void {
    this.rounds.delete(jobId);
    this.rounds.set(jobId, { from: sentFrom(data), round });
    for (const oldest of this.rounds.keys()) {
      if (this.rounds.size <= this.max) break;
      this.rounds.delete(oldest);
    }
  }

  /** The round kept for `jobId` when the job is still in the state it was sent from. */
  take(jobId: string, data: DeliverJob): R | undefined {
    const kept = this.rounds.get(jobId);
    if (kept === undefined) return undefined;
    if (kept.from === sentFrom(data)) return kept.round;
    this.rounds.delete(jobId);
    return undefined;
  }

  /** The job's commit landed. */
  committed(jobId: string): void {
    this.rounds.delete(jobId);
  }

  get size(): number {
    return this.rounds.size;
  }
}
