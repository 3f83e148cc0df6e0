import type { RegulationCreate, RegulationJob } from '../generated/contracts.js';
import { newRegulation } from './regulation-record.js';

const job = (request: Partial<RegulationCreate> = {}, id = 'reg_1'): RegulationJob => ({
  id,
  createdAt: '2026-11-21T10:00:00.000Z',
  request: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['alice', 'bob'], ...request },
});

describe('newRegulation', () => {
  it('is pending with zero counts, counts the subjects and never lists them', () => {
    const record = newRegulation(job({ regulationType: 'SUPPRESS_WITH_DELETE', sourceIds: ['s1'] }));
    expect(record).toEqual({
      id: 'reg_1',
      regulationType: 'SUPPRESS_WITH_DELETE',
      subjectType: 'USER_ID',
      subjectCount: 2,
      sourceIds: ['s1'],
      status: 'pending',
      createdAt: '2026-11-21T10:00:00.000Z',
      counts: { subjectsDone: 0, deleteNotices: 0, profilesErased: 0 },
    });
    expect(JSON.stringify(record)).not.toContain('alice');
  });

  it('leaves sourceIds out when the request does', () => {
    expect(newRegulation(job())).not.toHaveProperty('sourceIds');
  });
});
