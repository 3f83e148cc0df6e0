/** Accepting a regulation: the checks a schema cannot make, the job and its first record. Pure. */
import {
  RequestError,
  describeProblem,
  newRegulation,
  type ConfigSnapshot,
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
