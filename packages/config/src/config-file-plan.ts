/**
 * How the declarative config file (EVENTRELAY_CONFIG) is applied at start, by mode
 * (EVENTRELAY_CONFIG_MODE, docs/spec.md §6):
 *
 * - `seed` (the default): only when nothing was ever written to this prefix (version 0), so a
 *   deployment that restarts with its file never undoes what was changed through the API since
 *   (a write key rotated through the API stays rotated).
 * - `sync`: the file wins for every source, destination and audience it names, at every start.
 *
 * Either way only what actually differs is written, and each entity the file creates or changes
 * gets an audit entry attributed to the file (token id `config-file`), so the audit log shows the
 * file's doing beside the API's. An unchanged file writes nothing, not even a version bump, so the
 * several processes that apply it at start do not make each other reload.
 */
import { planUpsert, type ConfigChange, type ConfigPlan, type ConfigSnapshot } from './config-changes.js';
import type { ValidConfig } from './config-file.js';
import type { AuditEntry } from './generated/contracts.js';

export type ConfigFileMode = 'seed' | 'sync';

/** The token id the audit log gives to changes made by the config file. */
const CONFIG_FILE_ACTOR = 'config-file';

export interface ConfigFileOutcome {
  /** `skipped`: seed mode and the store already held config. */
  readonly outcome: 'applied' | 'unchanged' | 'skipped';
  /** Entities created or changed. */
  readonly changed: number;
}

export function planConfigFile(
  snapshot: ConfigSnapshot,
  config: ValidConfig,
  options: { readonly mode: ConfigFileMode; readonly path: string; readonly now: string },
): ConfigPlan<ConfigFileOutcome> {
  if (options.mode === 'seed' && snapshot.version > 0) return { changes: [], result: { outcome: 'skipped', changed: 0 } };
  const effective = planUpsert(snapshot, config).flatMap((change) => {
    const diff = changedFields(snapshot, change);
    return diff === undefined ? [] : [{ change, diff }];
  });
  const audit = effective.map(({ change, diff }): AuditEntry => {
    const [kind, id] = target(change);
    return {
      at: options.now,
      tokenId: CONFIG_FILE_ACTOR,
      action: `${kind}.${diff.created ? 'create' : 'update'}`,
      targetId: id,
      // Field names only: values may be secrets (write keys, shared secrets, header values).
      details: { file: options.path, mode: options.mode, ...(diff.created ? {} : { fields: diff.fields }) },
    };
  });
  return {
    changes: effective.map((e) => e.change),
    audit,
    result: { outcome: effective.length > 0 ? 'applied' : 'unchanged', changed: effective.length },
  };
}

function target(change: ConfigChange): ['source' | 'destination' | 'audience', string] {
  switch (change.kind) {
    case 'put-source':
    case 'delete-source':
      return ['source', change.source.id];
    case 'put-destination':
      return ['destination', change.destination.id];
    case 'put-audience':
      return ['audience', change.audience.id];
    case 'delete-destination':
    case 'delete-audience':
      return [change.kind === 'delete-destination' ? 'destination' : 'audience', change.id];
  }
}

/** undefined when the change would write what is already stored. */
function changedFields(snapshot: ConfigSnapshot, change: ConfigChange): { created: boolean; fields: string[] } | undefined {
  const [stored, next] =
    change.kind === 'put-source'
      ? [snapshot.sources.get(change.source.id), change.source]
      : change.kind === 'put-destination'
        ? [snapshot.destinations.get(change.destination.id), change.destination]
        : change.kind === 'put-audience'
          ? [snapshot.audiences.get(change.audience.id), change.audience]
          : [undefined, undefined];
  if (next === undefined) return { created: false, fields: [] };
  if (stored === undefined) return { created: true, fields: [] };
  const flat = (entity: object): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(entity).flatMap(([key, value]) =>
        key === 'settings' && value !== null && typeof value === 'object'
          ? Object.entries(value as object).map(([k, v]) => [`settings.${k}`, v])
          : [[key, value]],
      ),
    );
  const [before, after] = [flat(stored), flat(next)];
  // A mapping's key order is the order of its body's keys: there it counts.
  const text = (key: string) => (key === 'settings.mapping' ? JSON.stringify : canonical);
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((key) => text(key)(before[key]) !== text(key)(after[key]))
    .sort();
  return fields.length > 0 ? { created: false, fields } : undefined;
}

/** JSON with object keys sorted, so key order never counts as a change. */
function canonical(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) =>
      v !== null && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : v,
    ) ?? 'undefined'
  );
}
