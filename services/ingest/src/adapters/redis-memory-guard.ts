/**
 * Samples Redis memory in the background (`INFO memory`) so the hot path only reads a boolean; the
 * decision is domain/memory-guard.ts. A failed sample keeps the last verdict.
 */
import { fullestOf, judgeMemory, parseInfoMemory, type MemoryVerdict } from '../domain/memory-guard.js';
import { BackgroundSample } from './background-sample.js';

export class RedisMemoryGuard {
  private readonly verdict: BackgroundSample<MemoryVerdict>;

  constructor(
    /** `INFO <section>` of every primary (runtime infoOfPrimaries). */
    info: (section: string) => Promise<readonly string[]>,
    /** Share of maxmemory past which calls are refused; 0 turns the guard off. */
    private readonly limitRatio: number,
    intervalMs = 500,
  ) {
    this.verdict = new BackgroundSample<MemoryVerdict>(
      { kind: 'unbounded' },
      async () => {
        const verdicts: MemoryVerdict[] = [];
        for (const text of await info('memory')) {
          const memory = parseInfoMemory(text);
          if (memory) verdicts.push(judgeMemory(memory, limitRatio));
        }
        return fullestOf(verdicts);
      },
      intervalMs,
    );
  }

  /** Resolves after the first sample, so the intake never starts blind. */
  async start(): Promise<void> {
    if (this.limitRatio > 0) await this.verdict.start();
  }

  stop(): void {
    this.verdict.stop();
  }

  get overLimit(): boolean {
    return this.verdict.current.kind === 'overloaded';
  }

  /** used_memory / maxmemory as last sampled; undefined without maxmemory (or with the guard off). */
  get ratio(): number | undefined {
    const v = this.verdict.current;
    return v.kind === 'unbounded' ? undefined : v.ratio;
  }
}
