/**
 * What a full Redis is, and how long a process waits before writing again. Redis at its
 * `maxmemory` with `noeviction` refuses every write that could grow it ("OOM command not allowed
 * when used memory > 'maxmemory'") and keeps answering reads and deletes, so trying again at once
 * only repeats the refusal: a worker that does spins (issue 32 counted 16,000 refusals per process),
 * and a job run again redoes its work, its HTTP requests included. The waits grow while the refusals
 * go on and are capped, so a process notices that memory is back within one cap (docs/runbook.md,
 * EventrelayRedisFull).
 */

/** True when Redis refused a write for lack of memory: a plain command, a script, or a MULTI. */
export function isRedisFull(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.message.startsWith('OOM ')) return true;
  // A MULTI whose commands were refused while queued is discarded as a whole (EXECABORT); ioredis
  // keeps each refusal in previousErrors.
  const previous = (err as { previousErrors?: unknown }).previousErrors;
  return err.message.startsWith('EXECABORT') && Array.isArray(previous) && previous.some((e) => isRedisFull(e));
}

export interface FullBackoffPolicy {
  /** The first wait. */
  readonly baseMs: number;
  /** The longest wait: how late a process may notice that Redis takes writes again. */
  readonly maxMs: number;
  /** A refusal this long after the last wait ended starts over from baseMs: a new episode. */
  readonly quietMs: number;
}

/** A process's waits: how many in a row, and until when the current one lasts. */
export interface FullBackoff {
  readonly streak: number;
  readonly until: number;
}

export const NOT_FULL: FullBackoff = { streak: 0, until: 0 };

/** The default: 250 ms, doubling to 5 s; a minute without refusals ends the episode. */
export const FULL_BACKOFF_POLICY: FullBackoffPolicy = { baseMs: 250, maxMs: 5_000, quietMs: 60_000 };

/**
 * The wait after a refusal at `now`. Refusals during a wait (every job and worker of the process
 * meets the same full Redis) share it: they wait until it ends, and the schedule does not grow for
 * each of them, only from one wait to the next.
 */
export function backOffFull(state: FullBackoff, now: number, policy: FullBackoffPolicy): { state: FullBackoff; delayMs: number } {
  if (now < state.until) return { state, delayMs: state.until - now };
  const streak = state.streak > 0 && now - state.until <= policy.quietMs ? state.streak + 1 : 1;
  const delayMs = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(streak - 1, 30));
  return { state: { streak, until: now + delayMs }, delayMs };
}
