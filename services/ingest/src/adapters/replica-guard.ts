/**
 * Samples the primary's replicas in the background (`INFO replication`) so the hot path only reads
 * a boolean; the counting is domain/replica-guard.ts. A failed sample, or one read from a replica
 * during a failover, keeps the last count: the writes fail on their own then.
 */
import { fewestOnline } from '../domain/replica-guard.js';
import { BackgroundSample } from './background-sample.js';

export class ReplicaGuard {
  private readonly online: BackgroundSample<number>;

  constructor(
    /** `INFO <section>` of every primary (runtime infoOfPrimaries). */
    info: (section: string) => Promise<readonly string[]>,
    /** INGEST_DURABLE_REPLICAS */
    readonly required: number,
    intervalMs = 500,
  ) {
    this.online = new BackgroundSample<number>(0, async () => fewestOnline(await info('replication')), intervalMs);
  }

  /** Resolves after the first sample. */
  start(): Promise<void> {
    return this.online.start();
  }

  stop(): void {
    this.online.stop();
  }

  /** Replicas online as last sampled. */
  get replicas(): number {
    return this.online.current;
  }

  get short(): boolean {
    return this.online.current < this.required;
  }
}
