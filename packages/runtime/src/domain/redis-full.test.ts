import { ReplyError } from 'ioredis';
import { FULL_BACKOFF_POLICY, NOT_FULL, backOffFull, isRedisFull, type FullBackoff } from './redis-full.js';

const OOM = "OOM command not allowed when used memory > 'maxmemory'.";

describe('a full Redis', () => {
  it('is a refusal for lack of memory: a command, a script, a MULTI discarded for it', () => {
    expect(isRedisFull(new ReplyError(OOM))).toBe(true);
    expect(isRedisFull(new ReplyError(`${OOM} script: 7461926b, on @user_script:1.`))).toBe(true);
    const aborted = Object.assign(new ReplyError('EXECABORT Transaction discarded because of previous errors.'), {
      previousErrors: [new ReplyError(OOM)],
    });
    expect(isRedisFull(aborted)).toBe(true);
  });

  it('is nothing else', () => {
    expect(isRedisFull(new ReplyError("READONLY You can't write against a read only replica."))).toBe(false);
    expect(isRedisFull(new ReplyError('MISCONF Redis is configured to save RDB snapshots'))).toBe(false);
    expect(isRedisFull(new Error('Connection is closed.'))).toBe(false);
    const otherAbort = Object.assign(new ReplyError('EXECABORT Transaction discarded because of previous errors.'), {
      previousErrors: [new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value')],
    });
    expect(isRedisFull(otherAbort)).toBe(false);
    expect(isRedisFull(OOM)).toBe(false);
    expect(isRedisFull(undefined)).toBe(false);
  });
});

describe('the wait after a refusal', () => {
  const policy = { baseMs: 100, maxMs: 1_000, quietMs: 10_000 };

  function waits(times: readonly number[]): number[] {
    let state: FullBackoff = NOT_FULL;
    return times.map((now) => {
      const next = backOffFull(state, now, policy);
      state = next.state;
      return next.delayMs;
    });
  }

  it('doubles from one wait to the next, up to the cap', () => {
    // Each refusal comes as the previous wait ends.
    expect(waits([0, 100, 300, 700, 1_500, 2_500, 3_500])).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
  });

  it('is shared by the refusals that meet it, without growing', () => {
    expect(waits([0, 10, 60, 99])).toEqual([100, 90, 40, 1]);
    expect(waits([0, 50, 100, 150])).toEqual([100, 50, 200, 150]);
  });

  it('starts over after a quiet spell', () => {
    expect(waits([0, 100, 300, 300 + 400 + 10_001])).toEqual([100, 200, 400, 100]);
    expect(waits([0, 100, 300, 300 + 400 + 10_000])).toEqual([100, 200, 400, 800]);
  });

  it('never waits past the cap however long it lasts', () => {
    let state: FullBackoff = NOT_FULL;
    let now = 0;
    for (let i = 0; i < 100; i++) {
      const next = backOffFull(state, now, FULL_BACKOFF_POLICY);
      expect(next.delayMs).toBeLessThanOrEqual(FULL_BACKOFF_POLICY.maxMs);
      state = next.state;
      now = state.until;
    }
    expect(backOffFull(state, now, FULL_BACKOFF_POLICY).delayMs).toBe(FULL_BACKOFF_POLICY.maxMs);
  });
});
