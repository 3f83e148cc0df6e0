/**
 * Samples Redis memory in the background (`INFO memory`, every 500 ms by default) so the hot path
 * only reads a boolean; the decision is domain/memory-guard.ts. A failed sample keeps the last
 * verdict: an unreachable Redis is answered 503 by the writer anyway.
 */
import type { Redis } from 'ioredis';
import { judgeMemory, parseInfoMemory, type MemoryVerdict } from '../domain/memory-guard.js';

export class RedisMemoryGuard {
  private verdict: MemoryVerdict = { kind: 'unbounded' };
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Pick<Redis, 'info'>,
    /** Share of maxmemory past which calls are refused; 0 turns the guard off. */
    private readonly limitRatio: number,
    private readonly intervalMs = 500,
  ) {}

  /** Resolves after the first sample, so the intake never starts blind. */
  async start(): Promise<void> {
    if (this.limitRatio === 0) return;
    await this.sample();
    this.timer = setInterval(() => void this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  get overLimit(): boolean {
    return this.verdict.kind === 'overloaded';
  }

  /** used_memory / maxmemory as last sampled; undefined without maxmemory (or with the guard off). */
  get ratio(): number | undefined {
    return this.verdict.kind === 'unbounded' ? undefined : this.verdict.ratio;
  }

  private async sample(): Promise<void> {
    try {
      const memory = parseInfoMemory(await this.redis.info('memory'));
      if (memory) this.verdict = judgeMemory(memory, this.limitRatio);
    } catch {
      // Keep the last verdict (see above).
    }
  }
}
