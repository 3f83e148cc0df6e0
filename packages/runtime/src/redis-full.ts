/**
 * A process's answer to a full Redis (domain/redis-full.ts says what that is and how long to wait),
 * one per worker connection, shared by every worker on it:
 * - a worker that cannot take jobs (taking one is a write) is paused for the wait and resumed after
 *   it, instead of BullMQ asking again at once;
 * - a job whose write is refused keeps its job: the write is tried again after the wait, and the
 *   job's lock is kept alive meanwhile (BullMQ's own renewal is a write, refused too; PEXPIRE is
 *   not), so no other process takes the job and does its work again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Job, Worker } from 'bullmq';
import { FULL_BACKOFF_POLICY, NOT_FULL, backOffFull, isRedisFull, type FullBackoff } from './domain/redis-full.js';
import { defineScript, type RedisClient } from './redis.js';

// Extends the lock only while it is still this worker's: a lock another worker took is left alone.
const KEEP_LOCK = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;

type KeepLock = (numKeys: number, key: string, token: string, ms: number) => Promise<unknown>;

export class RedisFull {
  private state: FullBackoff = NOT_FULL;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any payload: only pause and resume are used
  private readonly paused = new Set<Worker<any>>();
  private resumeTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly clock: () => number = Date.now,
  ) {
    defineScript(redis, 'eventrelayKeepLock', KEEP_LOCK);
  }

  /** A write was refused now: how long to wait before the next. */
  private refused(): number {
    const next = backOffFull(this.state, this.clock(), FULL_BACKOFF_POLICY);
    this.state = next.state;
    return next.delayMs;
  }

  /** A write landed: the next refusal starts a new episode. */
  written(): void {
    this.state = NOT_FULL;
  }

  /**
   * Pauses `worker` (its active jobs go on) until the wait that a refusal seen by it starts ends;
   * `err` that is not a refusal is ignored.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any payload
  noteWorkerError(worker: Worker<any>, err: unknown): void {
    if (!isRedisFull(err) || worker.closing) return;
    const delayMs = this.refused();
    if (!worker.isPaused()) {
      this.paused.add(worker);
      void worker.pause(true).catch(() => undefined);
    }
    clearTimeout(this.resumeTimer);
    // Unref'd: a process shutting down does not wait for it (a closing worker is not resumed).
    this.resumeTimer = setTimeout(() => this.resumeAll(), delayMs);
    this.resumeTimer.unref();
  }

  private resumeAll(): void {
    this.resumeTimer = undefined;
    for (const worker of this.paused) if (!worker.closing) void worker.resume();
    this.paused.clear();
  }

  /**
   * Runs `write` until Redis takes it: a refusal waits (keeping the job's lock) and tries again,
   * any other error is thrown, and so is a refusal once `giveUp()` says the worker is closing (the
   * job then runs again elsewhere when its lock lapses).
   */
  async hold<T>(job: Job, token: string | undefined, lockMs: number, giveUp: () => boolean, write: () => Promise<T>): Promise<T> {
    let keeper: NodeJS.Timeout | undefined;
    try {
      for (;;) {
        try {
          const value = await write();
          if (keeper) this.written();
          return value;
        } catch (err) {
          if (!isRedisFull(err) || giveUp()) throw err;
          if (!keeper && token) {
            const keep = () => void this.keepLock(job, token, lockMs).catch(() => undefined);
            keep();
            keeper = setInterval(keep, Math.max(100, lockMs / 3));
          }
          await sleep(this.refused());
        }
      }
    } finally {
      clearInterval(keeper);
    }
  }

  private keepLock(job: Job, token: string, lockMs: number): Promise<unknown> {
    const keep = (this.redis as unknown as { eventrelayKeepLock: KeepLock }).eventrelayKeepLock;
    return keep.call(this.redis, 1, `${job.queueQualifiedName}:${job.id}:lock`, token, lockMs);
  }
}

const instances = new WeakMap<RedisClient, RedisFull>();

/** The one RedisFull of a connection: the workers and jobs on it meet the same Redis. */
export function redisFullOf(redis: RedisClient): RedisFull {
  let full = instances.get(redis);
  if (!full) {
    full = new RedisFull(redis);
    instances.set(redis, full);
  }
  return full;
}
