/**
 * Accepting a regulation: the checks a schema cannot make, the job and its first record; and the
 * regulation as the API shows it, with its deletion receipts. Pure.
 */
import {
  RequestError,
  describeProblem,
  newRegulation,
  type ConfigSnapshot,
  type DeletionReceipt,
  type FieldProblem,
  type Regulation,
  type RegulationCreate,
  type RegulationJob,
} from '@eventrelay/config';

export function planRegulation(
  snapshot: ConfigSnapshot,
  request: RegulationCreate,
  id: string,
  now: string,
): { job: RegulationJob; record: Regulation } {
  const problems: FieldProblem[] = [];
  request.sourceIds?.forEach((sourceId, i) => {
    if (!snapshot.sources.has(sourceId)) problems.push({ field: `sourceIds[${i}]`, message: `names no source ("${sourceId}")` });
  });
  if (problems.length > 0) throw new RequestError('invalid_request', problems.map(describeProblem).join('; '), problems);
  const job: RegulationJob = { id, createdAt: now, request };
  return { job, record: newRegulation(job) };
}

/**
 * The regulation as GET /regulations/:id shows it (docs/spec.md §6): the record, and for a deletion
 * what became of its delete notices, per destination (`counts`, as the receipts store them, by
 * destination id) and in all. `pending` is what is neither delivered, dead-lettered nor dropped
 * yet; never below 0, since an outcome can be recorded a moment before its page's plan is read.
 */
export function regulationView(record: Regulation, counts: readonly Omit<DeletionReceipt, 'pending'>[]): Regulation {
  const { receipts: _stored, ...rest } = record;
  if (record.regulationType === 'SUPPRESS') return rest;
  const destinations = counts.map((c) => ({ ...c, pending: Math.max(0, c.notices - c.delivered - c.deadLettered - c.dropped) }));
  const total = (key: Exclude<keyof DeletionReceipt, 'destinationId'>) => destinations.reduce((n, d) => n + d[key], 0);
  return {
    ...rest,
    receipts: {
      notices: total('notices'),
      delivered: total('delivered'),
      deadLettered: total('deadLettered'),
      dropped: total('dropped'),
      pending: total('pending'),
      destinations,
    },
  };
}
