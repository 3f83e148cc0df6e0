/**
 * Planning writes to sources. Pure: the caller gives the snapshot, the generated id and write key
 * and the write context, and hands the plan to the store.
 */
import {
  RequestError,
  type ConfigChange,
  type ConfigPlan,
  type ConfigSnapshot,
  type Destination,
  type Source,
  type SourceCreate,
  type SourcePatch,
} from '@eventrelay/config';
import { auditEntry, type WriteContext } from './write-context.js';

export function existingSource(snapshot: ConfigSnapshot, id: string): Source {
  const source = snapshot.sources.get(id);
  if (!source) throw new RequestError('not_found', `no source "${id}"`);
  return source;
}

export function planCreateSource(
  snapshot: ConfigSnapshot,
  input: SourceCreate,
  generated: { id: string; writeKey: string },
  ctx: WriteContext,
): ConfigPlan<Source> {
  const id = input.id ?? generated.id;
  if (snapshot.sources.has(id))
    throw new RequestError('conflict', `a source "${id}" already exists`, [{ field: 'id', message: 'is taken' }]);
  const source: Source = {
    id,
    name: input.name,
    type: input.type,
    writeKey: generated.writeKey,
    ...(input.rateLimitPerSecond === undefined ? {} : { rateLimitPerSecond: input.rateLimitPerSecond }),
    ...(input.memoryShare === undefined ? {} : { memoryShare: input.memoryShare }),
  };
  return {
    changes: [{ kind: 'put-source', source }],
    audit: [auditEntry(ctx, 'source.create', id, { name: source.name, type: source.type })],
    result: source,
  };
}

/** JSON merge patch: given fields replace, rateLimitPerSecond or memoryShare null removes the source's own value. */
export function planPatchSource(snapshot: ConfigSnapshot, id: string, patch: SourcePatch, ctx: WriteContext): ConfigPlan<Source> {
  const { rateLimitPerSecond, memoryShare, ...rest } = { ...existingSource(snapshot, id), ...patch };
  const source: Source = {
    ...rest,
    ...(rateLimitPerSecond === null || rateLimitPerSecond === undefined ? {} : { rateLimitPerSecond }),
    ...(memoryShare === null || memoryShare === undefined ? {} : { memoryShare }),
  };
  return {
    changes: [{ kind: 'put-source', source }],
    audit: [auditEntry(ctx, 'source.update', id, { fields: Object.keys(patch) })],
    result: source,
  };
}

/** The old key stops working as soon as every process has reloaded (within 2 s). */
export function planRotateWriteKey(snapshot: ConfigSnapshot, id: string, writeKey: string, ctx: WriteContext): ConfigPlan<Source> {
  const old = existingSource(snapshot, id);
  const source: Source = { ...old, writeKey };
  return {
    changes: [{ kind: 'put-source', source, previousWriteKey: old.writeKey }],
    audit: [auditEntry(ctx, 'source.rotate_write_key', id)],
    result: source,
  };
}

/** Also disconnects the source from every destination and audience, so no reference dangles. */
export function planDeleteSource(snapshot: ConfigSnapshot, id: string, ctx: WriteContext): ConfigPlan<undefined> {
  const source = existingSource(snapshot, id);
  const detached: Destination[] = [...snapshot.destinations.values()]
    .filter((d) => d.sourceIds.includes(id))
    .map((d) => ({ ...d, sourceIds: d.sourceIds.filter((s) => s !== id) }));
  const audiences = [...snapshot.audiences.values()].filter((a) => a.sourceIds.includes(id));
  const changes: ConfigChange[] = [
    { kind: 'delete-source', source },
    ...detached.map((destination): ConfigChange => ({ kind: 'put-destination', destination })),
    ...audiences.map((a): ConfigChange => ({ kind: 'put-audience', audience: { ...a, sourceIds: a.sourceIds.filter((s) => s !== id) } })),
  ];
  const details = {
    detachedFrom: detached.map((d) => d.id),
    ...(audiences.length > 0 ? { detachedFromAudiences: audiences.map((a) => a.id) } : {}),
  };
  return { changes, audit: [auditEntry(ctx, 'source.delete', id, details)], result: undefined };
}
