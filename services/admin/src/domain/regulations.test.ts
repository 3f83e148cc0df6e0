import type { Regulation } from '@eventrelay/config';
import { regulationView } from './regulations.js';

const record = (regulationType: Regulation['regulationType']): Regulation => ({
  id: 'reg_1',
  regulationType,
  subjectType: 'USER_ID',
  subjectCount: 3,
  status: 'running',
  createdAt: '2026-11-21T10:00:00.000Z',
  counts: { subjectsDone: 3, deleteNotices: 9, profilesErased: 1 },
});

describe('regulationView', () => {
  it('adds the receipts of a deletion: per destination with what is pending, and the totals', () => {
    const view = regulationView(record('DELETE'), [
      { destinationId: 'd-a', notices: 6, delivered: 3, deadLettered: 1, dropped: 0 },
      { destinationId: 'd-b', notices: 3, delivered: 0, deadLettered: 0, dropped: 3 },
    ]);
    expect(view).toEqual({
      ...record('DELETE'),
      receipts: {
        notices: 9,
        delivered: 3,
        deadLettered: 1,
        dropped: 3,
        pending: 2,
        destinations: [
          { destinationId: 'd-a', notices: 6, delivered: 3, deadLettered: 1, dropped: 0, pending: 2 },
          { destinationId: 'd-b', notices: 3, delivered: 0, deadLettered: 0, dropped: 3, pending: 0 },
        ],
      },
    });
  });

  it('never shows a negative pending (an outcome recorded a moment before its plan is read)', () => {
    const view = regulationView(record('SUPPRESS_WITH_DELETE'), [
      { destinationId: 'd-a', notices: 1, delivered: 2, deadLettered: 0, dropped: 0 },
      { destinationId: 'd-b', notices: 2, delivered: 0, deadLettered: 0, dropped: 0 },
    ]);
    expect(view.receipts).toMatchObject({ notices: 3, delivered: 2, pending: 2 });
    expect(view.receipts?.destinations.map((d) => d.pending)).toEqual([0, 2]);
  });

  it('shows zero receipts for a deletion with no notice planned yet, and none for a SUPPRESS', () => {
    expect(regulationView(record('DELETE'), []).receipts).toEqual({
      notices: 0,
      delivered: 0,
      deadLettered: 0,
      dropped: 0,
      pending: 0,
      destinations: [],
    });
    expect(regulationView(record('SUPPRESS'), [{ destinationId: 'd-a', notices: 1, delivered: 1, deadLettered: 0, dropped: 0 }])).toEqual(
      record('SUPPRESS'),
    );
  });
});
