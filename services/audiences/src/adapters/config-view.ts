/**
 * The config as the audiences service needs it, from memory, kept fresh by a ConfigWatch (a
 * change anywhere is seen within about a second). `onChange` runs after each reload; the service
 * uses it to start the backfill of a new or changed audience.
 */
import { emptySnapshot, type Audience, type ConfigSnapshot, type Destination } from '@eventrelay/config';
import { ConfigWatch, type ConfigStore } from '@eventrelay/stores';

export class ConfigView {
  private current: ConfigSnapshot = emptySnapshot;
  private bySource = new Map<string, Audience[]>();
  private readonly watch: ConfigWatch;

  constructor(
    store: ConfigStore,
    onChange: (snapshot: ConfigSnapshot) => Promise<void>,
    refreshMs = 1000,
    onRefreshError: (err: unknown) => void = () => undefined,
  ) {
    this.watch = new ConfigWatch(
      store,
      async () => {
        this.set(await store.snapshot());
        await onChange(this.current);
      },
      refreshMs,
      onRefreshError,
    );
  }

  start(): Promise<void> {
    return this.watch.start();
  }

  stop(): void {
    this.watch.stop();
  }

  refresh(): Promise<void> {
    return this.watch.refresh();
  }

  get snapshot(): ConfigSnapshot {
    return this.current;
  }

  get audiences(): Iterable<Audience> {
    return this.current.audiences.values();
  }

  audience(id: string): Audience | undefined {
    return this.current.audiences.get(id);
  }

  /** The audiences a call of this source can change. */
  audiencesOf(sourceId: string): readonly Audience[] {
    return this.bySource.get(sourceId) ?? [];
  }

  get destinations(): ReadonlyMap<string, Destination> {
    return this.current.destinations;
  }

  private set(snapshot: ConfigSnapshot): void {
    const bySource = new Map<string, Audience[]>();
    for (const a of snapshot.audiences.values()) for (const s of a.sourceIds) bySource.set(s, [...(bySource.get(s) ?? []), a]);
    this.current = snapshot;
    this.bySource = bySource;
  }
}
