/**
 * Samples Redis memory in the background (`INFO memory`) so the hot path only reads a boolean; the
 * decision is domain/memory-guard.ts. A failed sample keeps the last verdict. It also keeps the
 * smallest maxmemory of the primaries, which the sources' budgets are shares of.
 */
import { fullestOf, judgeMemory, parseInfoMemory, type MemoryVerdict } from '../domain/memory-guard.js';
import { BackgroundSample } from './background-sample.js';

interface Sampled {
  readonly verdict: MemoryVerdict;
  /** The smallest maxmemory of the primaries, bytes; undefined when one has none. */
  readonly maxmemory: number | undefined;
}

export class RedisMemoryGuard {
  private readonly sampled: BackgroundSample<Sampled>;

  constructor(
    /** `INFO <section>` of every primary (runtime infoOfPrimaries). */
    info: (section: string) => Promise<readonly string[]>,
    /** Share of maxmemory past which calls are refused; 0 turns the guard off. */
    private readonly limitRatio: number,
    /** Sample even with the guard off: something else reads maxmemory (the sources' budgets). */
    private readonly readMaxmemory = false,
    intervalMs = 500,
  ) {
    this.sampled = new BackgroundSample<Sampled>(
      { verdict: { kind: 'unbounded' }, maxmemory: undefined },
      async () => {
        const verdicts: MemoryVerdict[] = [];
        let maxmemory: number | undefined;
        let unbounded = false;
        for (const text of await info('memory')) {
          const memory = parseInfoMemory(text);
          if (!memory) continue;
          verdicts.push(judgeMemory(memory, limitRatio));
          if (memory.max <= 0) unbounded = true;
          else maxmemory = Math.min(maxmemory ?? Infinity, memory.max);
        }
        const verdict = fullestOf(verdicts);
        return verdict && { verdict, maxmemory: unbounded ? undefined : maxmemory };
      },
      intervalMs,
    );
  }

  /** Resolves after the first sample, so the intake never starts blind. */
  async start(): Promise<void> {
    if (this.limitRatio > 0 || this.readMaxmemory) await this.sampled.start();
  }

  stop(): void {
    this.sampled.stop();
  }

  get overLimit(): boolean {
    return this.limitRatio > 0 && this.sampled.current.verdict.kind === 'overloaded';
  }

  /** used_memory / maxmemory as last sampled; undefined without maxmemory (or with the guard off). */
  get ratio(): number | undefined {
    const v = this.sampled.current.verdict;
    return this.limitRatio <= 0 || v.kind === 'unbounded' ? undefined : v.ratio;
  }

  /** The smallest maxmemory of the primaries as last sampled; undefined when one has none (or nothing samples it). */
  get maxmemory(): number | undefined {
    return this.sampled.current.maxmemory;
  }
}
