/**
 * Planning writes to destinations, and the checks a schema cannot make: the settings rules of the
 * destination's catalog type, and that every sourceId names a source. Pure.
 */
import {
  RequestError,
  describeProblem,
  destinationType,
  type ConfigChange,
  type ConfigPlan,
  type ConfigSnapshot,
  type Destination,
  type DestinationCreate,
  type DestinationPatch,
  type FieldProblem,
  type WebhookTarget,
  type WebhookTargetPatch,
} from '@eventrelay/config';
import { auditEntry, type WriteContext } from './write-context.js';

export function existingDestination(snapshot: ConfigSnapshot, id: string): Destination {
  const destination = snapshot.destinations.get(id);
  if (!destination) throw new RequestError('not_found', `no destination "${id}"`);
  return destination;
}

export function planCreateDestination(
  snapshot: ConfigSnapshot,
  input: DestinationCreate,
  generatedId: string,
  ctx: WriteContext,
): ConfigPlan<Destination> {
  const id = input.id ?? generatedId;
  if (snapshot.destinations.has(id))
    throw new RequestError('conflict', `a destination "${id}" already exists`, [{ field: 'id', message: 'is taken' }]);
  const destination: Destination = {
    id,
    name: input.name,
    enabled: input.enabled ?? false,
    sourceIds: input.sourceIds ?? [],
    settings: input.settings,
  };
  assertValid(destination, snapshot);
  return {
    changes: [{ kind: 'put-destination', destination }],
    audit: [
      auditEntry(ctx, 'destination.create', id, {
        enabled: destination.enabled,
        sourceIds: destination.sourceIds,
        urls: destination.settings.webhooks.length,
      }),
    ],
    result: destination,
  };
}

/**
 * JSON merge patch: given fields replace the stored ones, lists (webhooks, sourceIds) whole;
 * settings.sharedSecret null removes the secret and leaving it out keeps it.
 */
export function planPatchDestination(
  snapshot: ConfigSnapshot,
  id: string,
  patch: DestinationPatch,
  ctx: WriteContext,
): ConfigPlan<Destination> {
  const old = existingDestination(snapshot, id);
  const { sharedSecret: oldSecret, ...oldSettings } = old.settings;
  const secret = patch.settings?.sharedSecret === undefined ? oldSecret : (patch.settings.sharedSecret ?? undefined);
  const webhooks = patch.settings?.webhooks ? resolveHintedHeaders(patch.settings.webhooks, old) : undefined;
  const destination: Destination = {
    ...old,
    ...(patch.enabled === undefined ? {} : { enabled: patch.enabled }),
    ...(patch.sourceIds === undefined ? {} : { sourceIds: patch.sourceIds }),
    settings: {
      ...oldSettings,
      ...(webhooks ? { webhooks } : {}),
      ...(secret === undefined ? {} : { sharedSecret: secret }),
    },
  };
  assertValid(destination, snapshot);
  return {
    changes: [{ kind: 'put-destination', destination }],
    audit: [auditEntry(ctx, 'destination.update', id, { fields: patchedFields(patch) })],
    result: destination,
  };
}

/**
 * Header values are write-only, so a read shows each as a hint; a client that sends back what it
 * read (to change a URL, say) sends hints. A hint keeps the value stored for that header (names
 * compare without case) on the stored webhook with the same URL, so the hint is never written as
 * the value; a hint with nothing stored to keep is refused by field, asking for the value itself.
 */
function resolveHintedHeaders(webhooks: readonly WebhookTargetPatch[], old: Destination): WebhookTarget[] {
  const problems: FieldProblem[] = [];
  const resolved = webhooks.map((webhook, i): WebhookTarget => {
    if (webhook.headers === undefined) return { url: webhook.url };
    const stored = old.settings.webhooks.find((w) => w.url === webhook.url)?.headers ?? {};
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(webhook.headers)) {
      if (typeof value === 'string') {
        headers[name] = value;
        continue;
      }
      const kept = Object.entries(stored).find(([storedName]) => storedName.toLowerCase() === name.toLowerCase())?.[1];
      if (kept !== undefined && value.set) headers[name] = kept;
      else
        problems.push({
          field: `settings.webhooks[${i}].headers.${name}`,
          message: `is a hint, and no value of this header is stored for ${webhook.url} to keep; send the value`,
        });
    }
    return { url: webhook.url, headers };
  });
  if (problems.length > 0) throw new RequestError('invalid_request', problems.map(describeProblem).join('; '), problems);
  return resolved;
}

/** Also disconnects it from every audience, so no reference dangles. */
export function planDeleteDestination(snapshot: ConfigSnapshot, id: string, ctx: WriteContext): ConfigPlan<undefined> {
  existingDestination(snapshot, id);
  const detached = [...snapshot.audiences.values()].filter((a) => a.destinationIds.includes(id));
  return {
    changes: [
      { kind: 'delete-destination', id },
      ...detached.map((a): ConfigChange => ({
        kind: 'put-audience',
        audience: { ...a, destinationIds: a.destinationIds.filter((d) => d !== id) },
      })),
    ],
    audit: [auditEntry(ctx, 'destination.delete', id, ...(detached.length > 0 ? [{ detachedFrom: detached.map((a) => a.id) }] : []))],
    result: undefined,
  };
}

/** What the schema cannot check, each problem naming its field. */
export function destinationProblems(destination: Destination, snapshot: ConfigSnapshot): FieldProblem[] {
  const type = destinationType(destination.name);
  const problems: FieldProblem[] = type
    ? [...type.settingsProblems(destination.settings, 'settings')]
    : [{ field: 'name', message: 'names no destination type in the catalog' }];
  destination.sourceIds.forEach((sourceId, i) => {
    if (!snapshot.sources.has(sourceId)) problems.push({ field: `sourceIds[${i}]`, message: `names no source ("${sourceId}")` });
  });
  return problems;
}

function assertValid(destination: Destination, snapshot: ConfigSnapshot): void {
  const problems = destinationProblems(destination, snapshot);
  if (problems.length > 0) throw new RequestError('invalid_request', problems.map(describeProblem).join('; '), problems);
}

/** Field paths a patch sets, for the audit log (never values: the secret is among them). */
function patchedFields(patch: DestinationPatch): string[] {
  return Object.keys(patch).flatMap((key) => (key === 'settings' ? Object.keys(patch.settings ?? {}).map((k) => `settings.${k}`) : [key]));
}
