/**
 * The config as one consistent snapshot, and changes to it as data. Whoever changes the config
 * (the admin API, a config file applied at start) reads a snapshot, plans its changes with pure
 * functions, and hands them to the store, which writes them all or none only if nobody else wrote
 * in between (optimistic concurrency on the version counter).
 */
import type { ValidConfig } from './config-file.js';
import { ConfigError } from './errors.js';
import type { Audience, AuditEntry, Destination, Source } from './generated/contracts.js';

export interface ConfigSnapshot {
  /** Bumped by every write; a commit names the version it was planned against. */
  readonly version: number;
  readonly sources: ReadonlyMap<string, Source>;
  readonly destinations: ReadonlyMap<string, Destination>;
  readonly audiences: ReadonlyMap<string, Audience>;
}

export type ConfigChange =
  /** `previousWriteKey`: the key the source had before, which stops working. */
  | { readonly kind: 'put-source'; readonly source: Source; readonly previousWriteKey?: string }
  | { readonly kind: 'delete-source'; readonly source: Source }
  | { readonly kind: 'put-destination'; readonly destination: Destination }
  /** Also erases the destination's attempt log and dead letters. */
  | { readonly kind: 'delete-destination'; readonly id: string }
  | { readonly kind: 'put-audience'; readonly audience: Audience }
  /** Also erases the audience's membership and sync state. */
  | { readonly kind: 'delete-audience'; readonly id: string };

/** A planned write: the changes, their audit entries, and what the writer answers with. */
export interface ConfigPlan<R> {
  readonly changes: readonly ConfigChange[];
  readonly audit?: readonly AuditEntry[];
  readonly result: R;
}

export const emptySnapshot: ConfigSnapshot = { version: 0, sources: new Map(), destinations: new Map(), audiences: new Map() };

/**
 * The changes that make the store hold everything in `config` (an upsert: what the file does not
 * name is left alone). A destination in the file without a `sharedSecret` keeps the one already
 * stored (with its rotation's `previousSecret`), and a webhook without `headers` keeps the
 * headers stored for the same URL of that destination (`"headers": {}` removes them) and its
 * disabled state (`"disabled": false` re-enables it), so an
 * exported config (which never holds secrets) can be applied again safely.
 */
export function planUpsert(snapshot: ConfigSnapshot, config: ValidConfig): ConfigChange[] {
  const incoming = new Map(config.sources.map((s) => [s.id, s]));
  const holders = new Map([...snapshot.sources.values()].map((s) => [s.writeKey, s]));
  const conflicts = config.sources.flatMap((s) => {
    const holder = holders.get(s.writeKey);
    return holder && holder.id !== s.id && !incoming.has(holder.id)
      ? [`source "${s.id}": its writeKey already belongs to source "${holder.id}"`]
      : [];
  });
  if (conflicts.length > 0) throw new ConfigError('invalid_config', conflicts.join('; '));
  return [
    ...config.sources.map((source): ConfigChange => {
      const previous = snapshot.sources.get(source.id)?.writeKey;
      return previous !== undefined && previous !== source.writeKey
        ? { kind: 'put-source', source, previousWriteKey: previous }
        : { kind: 'put-source', source };
    }),
    ...config.destinations.map((destination): ConfigChange => {
      const stored = snapshot.destinations.get(destination.id)?.settings;
      const keep = destination.settings.sharedSecret === undefined && stored?.sharedSecret !== undefined;
      // A kept secret keeps its rotation's previous secret too: applying the file (at every start in
      // sync mode) must not end an overlap that receivers still verify with.
      const keepPrevious = keep && destination.settings.previousSecret === undefined && stored?.previousSecret !== undefined;
      const webhooks = destination.settings.webhooks.map((webhook) => {
        const storedTarget = stored?.webhooks.find((w) => w.url === webhook.url);
        const withHeaders =
          webhook.headers === undefined && storedTarget?.headers !== undefined ? { ...webhook, headers: storedTarget.headers } : webhook;
        // A URL delivery disabled (410 Gone) stays disabled unless the file says `disabled: false`:
        // a sync at every start must not send calls to it again.
        return webhook.disabled === undefined && storedTarget?.disabled
          ? { ...withHeaders, disabled: true, ...(storedTarget.disabledReason ? { disabledReason: storedTarget.disabledReason } : {}) }
          : withHeaders;
      });
      const settings = {
        ...destination.settings,
        webhooks,
        ...(keep ? { sharedSecret: stored?.sharedSecret } : {}),
        ...(keepPrevious ? { previousSecret: stored?.previousSecret } : {}),
      };
      return { kind: 'put-destination', destination: { ...destination, settings } };
    }),
    ...config.audiences.map((audience): ConfigChange => ({ kind: 'put-audience', audience })),
  ];
}

/** The snapshot as a config file would hold it, secrets left out (they are write-only). */
export function exportConfig(snapshot: ConfigSnapshot): ValidConfig {
  const byId = <T extends { id: string }>(items: Iterable<T>) => [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    sources: byId(snapshot.sources.values()),
    destinations: byId(snapshot.destinations.values()).map((d) => {
      // Header values are secrets too (an Authorization for the receiver); applying the export
      // keeps the stored ones (planUpsert).
      const { sharedSecret: _secret, previousSecret: _previous, webhooks, ...settings } = d.settings;
      return { ...d, settings: { ...settings, webhooks: webhooks.map(({ headers: _headers, ...webhook }) => webhook) } };
    }),
    audiences: byId(snapshot.audiences.values()),
  };
}
