/**
 * Destinations, served from memory to the router and webhook-delivery. The config version counter
 * is polled every `refreshMs`, so a change made anywhere reaches every process within about that
 * long (SPEC section 6 allows 2 s) at the cost of one GET per second per process.
 */
import type { Destination } from '@eventrelay/config';
import type { ConfigStore } from './config-store.js';

export class DestinationDirectory {
  private byId = new Map<string, Destination>();
  private bySource = new Map<string, Destination[]>();
  private version = -1;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: ConfigStore,
    private readonly refreshMs = 1000,
    private readonly onRefreshError: (err: unknown) => void = () => undefined,
  ) {}

  /** Loads every destination; rejects when Redis cannot be read. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().catch(this.onRefreshError), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  get(id: string): Destination | undefined {
    return this.byId.get(id);
  }

  /** Enabled destinations connected to the source. */
  forSource(sourceId: string): readonly Destination[] {
    return this.bySource.get(sourceId) ?? [];
  }

  /** Reloads now when the version moved; tests call it to skip the wait. */
  async refresh(): Promise<void> {
    const version = await this.store.version();
    if (version === this.version) return;
    const all = await this.store.destinations();
    const bySource = new Map<string, Destination[]>();
    for (const d of all) {
      if (!d.enabled) continue;
      for (const sourceId of d.sourceIds) bySource.set(sourceId, [...(bySource.get(sourceId) ?? []), d]);
    }
    this.byId = new Map(all.map((d) => [d.id, d]));
    this.bySource = bySource;
    this.version = version;
  }
}
