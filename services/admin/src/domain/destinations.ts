/**
 * Planning writes to destinations, and the checks a schema cannot make: the settings rules of the
 * destination's catalog type, and that every sourceId names a source. Pure.
 */
import {
  RequestError,
  describeProblem,
  filtersProblems,
  previousSecretInForce,
  destinationType,
  type ConfigChange,
  type ConfigPlan,
  type ConfigSnapshot,
  type Destination,
  type DestinationCreate,
  type DestinationPatch,
  type FieldProblem,
  type SecretRotation,
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
    ...(input.filters !== undefined && input.filters.length > 0 ? { filters: input.filters } : {}),
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

type Settings = Destination['settings'];
type SettingsPatch = NonNullable<DestinationPatch['settings']>;

/** Settings a patch replaces when given, and removes (back to the default) when null. */
const RESETTABLE = [
  'standardWebhooks',
  'timeoutMs',
  'retryWindowMs',
  'maxConcurrentRequests',
  'maxRequestsPerSecond',
  'autoDisableAfterMs',
  'mapping',
  'batching',
] as const satisfies readonly (keyof SettingsPatch & keyof Settings)[];

/**
 * JSON merge patch: given fields replace the stored ones, lists (webhooks, sourceIds) whole; null
 * removes a setting (back to its default); a field left out keeps what is stored. Removing the
 * secret removes a rotation's previous secret with it: it only ever signs next to a current one.
 */
export function planPatchDestination(
  snapshot: ConfigSnapshot,
  id: string,
  patch: DestinationPatch,
  ctx: WriteContext,
): ConfigPlan<Destination> {
  const old = existingDestination(snapshot, id);
  const given = patch.settings ?? {};
  const { sharedSecret: oldSecret, previousSecret: oldPrevious, ...kept } = old.settings;
  const settings: Settings = { ...kept, ...(given.webhooks ? { webhooks: resolveWebhooks(given.webhooks, old) } : {}) };
  for (const key of RESETTABLE) {
    const value = given[key];
    if (value === null) delete settings[key];
    else if (value !== undefined) Object.assign(settings, { [key]: value });
  }
  const secret = given.sharedSecret === undefined ? oldSecret : (given.sharedSecret ?? undefined);
  if (secret !== undefined) settings.sharedSecret = secret;
  // A previous secret that expired signs nothing any more: a write drops it rather than keep it stored.
  const previous =
    secret === undefined || given.previousSecret === null ? undefined : previousSecretInForce(oldPrevious, Date.parse(ctx.now));
  if (previous !== undefined) settings.previousSecret = previous;
  const { filters: oldFilters, ...unfiltered } = old;
  const filters = patch.filters === undefined ? oldFilters : (patch.filters ?? undefined);
  const destination: Destination = {
    ...unfiltered,
    ...(patch.enabled === undefined ? {} : { enabled: patch.enabled }),
    ...(patch.sourceIds === undefined ? {} : { sourceIds: patch.sourceIds }),
    settings,
    ...(filters !== undefined && filters.length > 0 ? { filters } : {}),
  };
  assertValid(destination, snapshot);
  return {
    changes: [{ kind: 'put-destination', destination }],
    audit: [auditEntry(ctx, 'destination.update', id, { fields: patchedFields(patch) })],
    result: destination,
  };
}

/** How long the replaced secret keeps signing when a rotation does not say (docs/receivers.md). */
export const DEFAULT_SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface SecretRotationPlan {
  readonly destination: Destination;
  /** The new secret, for the answer (shown that once). */
  readonly secret: string;
  /** When the replaced secret stops signing; absent when nothing keeps signing next to the new one. */
  readonly previousExpiresAt?: string;
}

/**
 * The new secret signs from now on; the current one keeps signing next to it for the overlap
 * (X-Signature stays on it, so receivers can switch at their pace), then is ignored. Rotating
 * again during an overlap replaces the previous secret with the current one: only the two newest
 * ever sign. `generated` is used when the request gives no secret.
 */
export function planRotateSecret(
  snapshot: ConfigSnapshot,
  id: string,
  rotation: SecretRotation,
  generated: string,
  ctx: WriteContext,
): ConfigPlan<SecretRotationPlan> {
  const old = existingDestination(snapshot, id);
  const secret = rotation.secret ?? generated;
  const { sharedSecret: current, previousSecret: _replaced, ...kept } = old.settings;
  if (secret === current)
    throw new RequestError('invalid_request', 'secret is the current secret; give a new one', [
      { field: 'secret', message: 'is the current secret; give a new one' },
    ]);
  const overlapMs = current === undefined ? 0 : (rotation.overlapMs ?? DEFAULT_SECRET_OVERLAP_MS);
  const previousExpiresAt = overlapMs > 0 ? new Date(Date.parse(ctx.now) + overlapMs).toISOString() : undefined;
  const destination: Destination = {
    ...old,
    settings: {
      ...kept,
      sharedSecret: secret,
      ...(current !== undefined && previousExpiresAt !== undefined
        ? { previousSecret: { secret: current, expiresAt: previousExpiresAt } }
        : {}),
    },
  };
  assertValid(destination, snapshot);
  return {
    changes: [{ kind: 'put-destination', destination }],
    // The overlap only: never a secret, old or new.
    audit: [auditEntry(ctx, 'destination.secret_rotated', id, { overlapMs })],
    result: { destination, secret, ...(previousExpiresAt !== undefined ? { previousExpiresAt } : {}) },
  };
}

/**
 * The patch's webhooks as stored: hinted header values resolved, and the disabled state of each
 * URL. A URL disabled by its 410 answer (or by an operator) stays disabled when a client sends the
 * list back without `disabled`, so editing another URL never re-enables it by accident;
 * `disabled: false` re-enables it and clears the reason.
 */
function resolveWebhooks(webhooks: readonly WebhookTargetPatch[], old: Destination): WebhookTarget[] {
  const problems: FieldProblem[] = [];
  const resolved = resolveHintedHeaders(webhooks, old, problems).map((target, i): WebhookTarget => {
    const given = webhooks[i]!;
    const stored = old.settings.webhooks.find((w) => w.url === given.url);
    const disabled = given.disabled ?? stored?.disabled === true;
    if (!disabled) {
      if (given.disabled === undefined && given.disabledReason !== undefined)
        problems.push({
          field: `settings.webhooks[${i}].disabledReason`,
          message: `describes a disabled URL, and ${given.url} is not disabled; send "disabled": true with it`,
        });
      return target;
    }
    const reason = given.disabledReason ?? (stored?.disabled === true ? stored.disabledReason : undefined);
    return { ...target, disabled: true, ...(reason !== undefined ? { disabledReason: reason } : {}) };
  });
  if (problems.length > 0) throw new RequestError('invalid_request', problems.map(describeProblem).join('; '), problems);
  return resolved;
}

/**
 * Header values are write-only, so a read shows each as a hint; a client that sends back what it
 * read (to change a URL, say) sends hints. A hint keeps the value stored for that header (names
 * compare without case) on the stored webhook with the same URL, so the hint is never written as
 * the value; a hint with nothing stored to keep is refused by field, asking for the value itself.
 */
function resolveHintedHeaders(webhooks: readonly WebhookTargetPatch[], old: Destination, problems: FieldProblem[]): WebhookTarget[] {
  return webhooks.map((webhook, i): WebhookTarget => {
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
  // Checked here, not in the settings rules: a config file may leave the secret out to keep the
  // stored one (exports never hold it), so only a write that holds every setting can tell.
  if (destination.settings.standardWebhooks && destination.settings.sharedSecret === undefined)
    problems.push({ field: 'settings.standardWebhooks', message: 'needs a sharedSecret to sign with' });
  destination.sourceIds.forEach((sourceId, i) => {
    if (!snapshot.sources.has(sourceId)) problems.push({ field: `sourceIds[${i}]`, message: `names no source ("${sourceId}")` });
  });
  if (destination.filters !== undefined) problems.push(...filtersProblems(destination.filters, 'filters'));
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
