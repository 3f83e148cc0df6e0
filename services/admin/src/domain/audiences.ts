/**
 * Planning writes to audiences, and the checks a schema cannot make (audience-rules.ts, shared
 * with the config file). Pure.
 */
import {
  RequestError,
  audienceFingerprint,
  audienceProblems,
  describeProblem,
  traitKey,
  type Audience,
  type AudienceCreate,
  type AudienceMembership,
  type AudienceView,
  type ConfigPlan,
  type ConfigSnapshot,
  type PassState,
} from '@eventrelay/config';
import { auditEntry, type WriteContext } from './write-context.js';

export function existingAudience(snapshot: ConfigSnapshot, id: string): Audience {
  const audience = snapshot.audiences.get(id);
  if (!audience) throw new RequestError('not_found', `no audience "${id}"`);
  return audience;
}

export function planCreateAudience(
  snapshot: ConfigSnapshot,
  input: AudienceCreate,
  generatedId: string,
  ctx: WriteContext,
): ConfigPlan<Audience> {
  const id = input.id ?? generatedId;
  if (snapshot.audiences.has(id))
    throw new RequestError('conflict', `an audience "${id}" already exists`, [{ field: 'id', message: 'is taken' }]);
  const audience: Audience = {
    id,
    name: input.name,
    sourceIds: input.sourceIds,
    destinationIds: input.destinationIds,
    condition: input.condition,
  };
  const problems = audienceProblems(audience, {
    sourceIds: new Set(snapshot.sources.keys()),
    destinationIds: new Set(snapshot.destinations.keys()),
    others: snapshot.audiences.values(),
  });
  if (problems.length > 0) throw new RequestError('invalid_request', problems.map(describeProblem).join('; '), problems);
  return {
    changes: [{ kind: 'put-audience', audience }],
    audit: [
      auditEntry(ctx, 'audience.create', id, {
        traitKey: traitKey(audience.name),
        sourceIds: audience.sourceIds,
        destinationIds: audience.destinationIds,
      }),
    ],
    result: audience,
  };
}

/** Also erases its membership; no `false` identifies are sent for its members. */
export function planDeleteAudience(snapshot: ConfigSnapshot, id: string, ctx: WriteContext): ConfigPlan<undefined> {
  existingAudience(snapshot, id);
  return { changes: [{ kind: 'delete-audience', id }], audit: [auditEntry(ctx, 'audience.delete', id)], result: undefined };
}

export function toAudienceView(audience: Audience, pass: PassState, members: number): AudienceView {
  // A pass of an earlier definition says nothing about this one: its backfill has not begun.
  const current = pass.fingerprint === audienceFingerprint(audience);
  const membership: AudienceMembership = {
    status: current && pass.status ? pass.status : 'pending',
    members,
    ...(current && pass.scanned !== undefined ? { profilesScanned: pass.scanned } : {}),
    ...(current && pass.lastFullSyncAt !== undefined ? { lastFullSyncAt: new Date(pass.lastFullSyncAt).toISOString() } : {}),
  };
  return { ...audience, traitKey: traitKey(audience.name), membership };
}
