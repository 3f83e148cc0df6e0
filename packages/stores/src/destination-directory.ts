/**
 * Destinations, served from memory to the router and webhook-delivery, kept fresh by a ConfigWatch;
 * with them, the sources some audience reads (the router feeds profiles for those only).
 */
import type { Destination } from '@eventrelay/config';
import type { ConfigStore } from './config-store.js';
import { ConfigWatch } from './config-watch.js';

export class DestinationDirectory {
  private byId = new Map<string, Destination>();
  private bySource = new Map<string, Destination[]>();
  private readSources: ReadonlySet<string> = new Set();
  private readonly watch: ConfigWatch;
  private readonly listeners: (() => void)[] = [];

  constructor(store: ConfigStore, refreshMs = 1000, onRefreshError: (err: unknown) => void = () => undefined) {
    this.watch = new ConfigWatch(store, () => this.load(store), refreshMs, onRefreshError);
  }

  /** Loads every destination; rejects when Redis cannot be read. */
  start(): Promise<void> {
    return this.watch.start();
  }

  stop(): void {
    this.watch.stop();
  }

  /** Reloads now when the config version moved (instead of within a second). */
  refresh(): Promise<void> {
    return this.watch.refresh();
  }

  /** Called after every reload (a changed config version). */
  onLoad(listener: () => void): void {
    this.listeners.push(listener);
  }

  get(id: string): Destination | undefined {
    return this.byId.get(id);
  }

  /** Enabled destinations connected to the source. */
  forSource(sourceId: string): readonly Destination[] {
    return this.bySource.get(sourceId) ?? [];
  }

  /**
   * The ids of the sources that at least one audience reads (its `sourceIds`), as of the last
   * reload. A new set on each reload, never changed in place: a caller may keep one for a job.
   */
  audienceSources(): ReadonlySet<string> {
    return this.readSources;
  }

  private async load(store: ConfigStore): Promise<void> {
    // Read after the version (ConfigWatch), so it is at least as new as it; one MULTI, so the
    // destinations and the audiences are of one version.
    const snapshot = await store.snapshot();
    const all = [...snapshot.destinations.values()];
    const audiences = [...snapshot.audiences.values()];
    const bySource = new Map<string, Destination[]>();
    for (const d of all) {
      if (!d.enabled) continue;
      for (const sourceId of d.sourceIds) bySource.set(sourceId, [...(bySource.get(sourceId) ?? []), d]);
    }
    this.byId = new Map(all.map((d) => [d.id, d]));
    this.bySource = bySource;
    this.readSources = new Set(audiences.flatMap((a) => a.sourceIds));
    for (const listener of this.listeners) listener();
  }
}
