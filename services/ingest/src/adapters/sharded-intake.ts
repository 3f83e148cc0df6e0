/**
 * The intake over several route shards (EVENTRELAY_SHARDS): each source's calls go to the writer of
 * its shard, so its rate and dedupe keys, its batches and their route jobs share one slot and the
 * intake step stays one MULTI. Each shard's writer coalesces its own flushes.
 */
import type { IntakeWriter, Refusal, Submission, SubmitResult } from './intake-writer.js';

export class ShardedIntake {
  constructor(
    private readonly writers: readonly Pick<IntakeWriter, 'submit' | 'refusal'>[],
    private readonly shardOf: (sourceId: string) => number,
  ) {}

  submit(sub: Submission): Promise<SubmitResult> {
    return this.writerOf(sub.sourceId).submit(sub);
  }

  refusal(sourceId: string): Refusal | undefined {
    return this.writerOf(sourceId).refusal(sourceId);
  }

  private writerOf(sourceId: string): Pick<IntakeWriter, 'submit' | 'refusal'> {
    return this.writers[this.shardOf(sourceId)] as Pick<IntakeWriter, 'submit' | 'refusal'>;
  }
}
