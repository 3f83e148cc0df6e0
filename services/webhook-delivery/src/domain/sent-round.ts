/**
 * Which state of a job a round was sent from. A round whose requests went out but whose commit
 * did not land (Redis refused it: full) is kept by the process, and committed instead of sent again
 * when the job runs again from the same state. Each commit moves the state on: a batch job's
 * commit ends its hold on the batch (its run again stops there, before this is asked), a job
 * holding calls counts one more run and rewrites its calls. So a job found in the state its round
 * was sent from has had no commit since, and the round's outcomes are still the ones to commit.
 */
import type { DeliverJob } from '@eventrelay/config';

export function sentFrom(data: DeliverJob): string {
  if ('batch' in data) return `b ${data.batch.id}`;
  return `c ${data.runs ?? 0} ${data.counted ?? 0} ${data.calls.length} ${data.calls[0]?.call.messageId ?? ''}`;
}
