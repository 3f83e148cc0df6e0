/**
 * The intake over several route shards (EVENTRELAY_SHARDS): each source's calls go to the writer of
 * its shard, so its rate and dedupe keys, its batches and their route jobs share one slot and the
 * intake step stays one MULTI. Each shard's writer coalesces its own flushes.
 */
import type { IntakeWriter, Submission, SubmitResult } from './intake-writer.js';

export class ShardedIntake {
  constructor(
    private readonly writers: readonly Pick<IntakeWriter, 'submit'>[],
    private readonly shardOf: (sourceId: string) => number,
  ) {}

  submit(sub: Submission): Promise<SubmitResult> {
    return (this.writers[this.shardOf(sub.sourceId)] as Pick<IntakeWriter, 'submit'>).submit(sub);
  }
}
