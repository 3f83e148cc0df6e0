/**
 * Samples Redis memory in the background (`INFO memory`) so the hot path reads no Redis; the
 * decision is domain/memory-guard.ts. A failed sample keeps the last one. Between two samples, what
 * this process stored counts as if Redis held it already, and a flush's worth of room is kept below
 * maxmemory: a flood cannot write past the limit before the next sample sees it. It also keeps
 * the smallest maxmemory of the primaries, which the sources' budgets are shares of.
 */
import {
  FLUSH_HEADROOM_BYTES,
  fullestOf,
  judgeMemory,
  parseInfoMemory,
  type MemoryVerdict,
  type RedisMemory,
} from '../domain/memory-guard.js';
import { BackgroundSample } from './background-sample.js';

interface Sampled {
  /** Every primary's memory, as last sampled. */
  readonly primaries: readonly RedisMemory[];
}

const NEVER: Sampled = { primaries: [] };

export class RedisMemoryGuard {
  private readonly sampled: BackgroundSample<Sampled>;
  /** Bytes stored since `unseenOf` was sampled. */
  private unseen = 0;
  private unseenOf: Sampled = NEVER;

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
      NEVER,
      async () => {
        const primaries: RedisMemory[] = [];
        for (const text of await info('memory')) {
          const memory = parseInfoMemory(text);
          if (memory) primaries.push(memory);
        }
        return primaries.length > 0 ? { primaries } : undefined;
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

  /** A request's calls were stored (domain/memory-guard.ts storedBytesOf): they count until the next sample. */
  noteStored(bytes: number): void {
    this.freshen();
    this.unseen += bytes;
  }

  get overLimit(): boolean {
    return this.limitRatio > 0 && this.verdict().kind === 'overloaded';
  }

  /** used_memory / maxmemory as last sampled; undefined without maxmemory (or with the guard off). */
  get ratio(): number | undefined {
    const v = this.verdict();
    return this.limitRatio <= 0 || v.kind === 'unbounded' ? undefined : v.ratio;
  }

  /** The smallest maxmemory of the primaries as last sampled; undefined when one has none (or nothing samples it). */
  get maxmemory(): number | undefined {
    const { primaries } = this.sampled.current;
    if (primaries.length === 0 || primaries.some((m) => m.max <= 0)) return undefined;
    return Math.min(...primaries.map((m) => m.max));
  }

  /** The fullest primary decides; this process's unseen writes are counted on each (it cannot tell which shard they went to). */
  private verdict(): MemoryVerdict {
    this.freshen();
    const { primaries } = this.sampled.current;
    return fullestOf(primaries.map((m) => judgeMemory(m, this.limitRatio, this.unseen, FLUSH_HEADROOM_BYTES))) ?? { kind: 'unbounded' };
  }

  /** A new sample holds what was stored before it: the count starts again. */
  private freshen(): void {
    const current = this.sampled.current;
    if (current !== this.unseenOf) {
      this.unseenOf = current;
      this.unseen = 0;
    }
  }
}
