/**
 * Write key → source, served from memory. A key added to Redis is found at once (a miss asks
 * Redis); changes and removals are seen within `refreshMs` through the config version counter.
 * Misses are remembered briefly so that a client hammering with a bad key costs one lookup a second.
 */
import { ConfigWatch, type ConfigStore } from '@eventrelay/stores';
import type { Source } from '@eventrelay/config';

const MAX_NEGATIVE_ENTRIES = 10_000;

export class SourceDirectory {
  private byWriteKey = new Map<string, Source>();
  private misses = new Map<string, number>();
  private readonly watch: ConfigWatch;

  constructor(
    private readonly store: ConfigStore,
    private readonly clock: () => number,
    private readonly refreshMs = 1000,
  ) {
    this.watch = new ConfigWatch(store, () => this.load(), refreshMs);
  }

  /** Loads every source; rejects when Redis cannot be read. */
  start(): Promise<void> {
    return this.watch.start();
  }

  stop(): void {
    this.watch.stop();
  }

  async lookup(writeKey: string): Promise<Source | undefined> {
    const hit = this.byWriteKey.get(writeKey);
    if (hit) return hit;
    const missedAt = this.misses.get(writeKey);
    if (missedAt !== undefined && this.clock() - missedAt < this.refreshMs) return undefined;
    const found = await this.store.sourceByWriteKey(writeKey);
    if (found) {
      this.byWriteKey.set(writeKey, found);
      this.misses.delete(writeKey);
    } else {
      if (this.misses.size >= MAX_NEGATIVE_ENTRIES) this.misses.clear();
      this.misses.set(writeKey, this.clock());
    }
    return found;
  }

  /** The ids of the sources last loaded. */
  *sourceIds(): IterableIterator<string> {
    for (const source of this.byWriteKey.values()) yield source.id;
  }

  private async load(): Promise<void> {
    const sources = await this.store.sources();
    this.byWriteKey = new Map(sources.map((s) => [s.writeKey, s]));
    this.misses.clear();
  }
}
