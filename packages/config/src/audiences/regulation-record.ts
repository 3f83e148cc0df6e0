import type { Regulation, RegulationJob } from '../generated/contracts.js';

/**
 * A regulation's record as it is accepted: written by the admin API after queuing the job, and by
 * the audiences service if it starts before that write. Never holds the subject ids.
 */
export function newRegulation(job: RegulationJob): Regulation {
  const { request } = job;
  return {
    id: job.id,
    regulationType: request.regulationType,
    subjectType: request.subjectType,
    subjectCount: request.subjectIds.length,
    ...(request.sourceIds ? { sourceIds: request.sourceIds } : {}),
    status: 'pending',
    createdAt: job.createdAt,
    counts: { subjectsDone: 0, deleteNotices: 0, profilesErased: 0 },
  };
}
