/**
 * How every process keeps its in-memory view of the config fresh: `reload` runs at start and then
 * whenever the config version counter moved, checked every `refreshMs`. One GET a second per
 * process, and a change made anywhere is seen within about that long (docs/spec.md §6 allows 2 s).
 */
import type { ConfigStore } from './config-store.js';

export class ConfigWatch {
  private version = -1;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: ConfigStore,
    private readonly reload: () => Promise<void>,
    private readonly refreshMs = 1000,
    private readonly onRefreshError: (err: unknown) => void = () => undefined,
  ) {}

  /** Loads once; rejects when Redis cannot be read. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().catch(this.onRefreshError), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Reloads now when the version moved. */
  async refresh(): Promise<void> {
    const version = await this.store.version();
    if (version === this.version) return;
    await this.reload();
    this.version = version;
  }
}
