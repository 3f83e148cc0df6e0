import {
  callDeliveryId,
  emptySnapshot,
  type ConfigSnapshot,
  type DeleteNotice,
  type Destination,
  type RegulationCreate,
  type RegulationJob,
  type Source,
} from '@eventrelay/config';
import { affectedSources, deleteNotices, deletes, suppresses } from './regulation.js';

const source = (id: string): Source => ({ id, name: id, type: 'server', writeKey: `wk_${id}_0000000` });
const destination = (id: string, sourceIds: string[], enabled = true): Destination => ({
  id,
  name: 'Webhooks',
  enabled,
  sourceIds,
  settings: { webhooks: [{ url: `https://${id}.example/in` }] },
});

// s1 and s2 reach an enabled destination; s3 only a disabled one.
const snapshot: ConfigSnapshot = {
  ...emptySnapshot,
  sources: new Map(['s2', 's1', 's3'].map((id) => [id, source(id)])),
  destinations: new Map([
    ['d-both', destination('d-both', ['s1', 's2'])],
    ['d-off', destination('d-off', ['s1', 's2', 's3'], false)],
    ['d-s3-off', destination('d-s3-off', ['s3'], false)],
  ]),
};

const job = (request: Partial<RegulationCreate> = {}, id = 'reg_1'): RegulationJob => ({
  id,
  createdAt: '2026-11-21T10:00:00.000Z',
  request: { regulationType: 'DELETE', subjectType: 'USER_ID', subjectIds: ['alice', 'bob'], ...request },
});

describe('affectedSources', () => {
  it('is every source, sorted, when none is listed', () => {
    expect(affectedSources(job(), snapshot)).toEqual(['s1', 's2', 's3']);
  });

  it('is the listed sources, skipping one deleted since', () => {
    expect(affectedSources(job({ sourceIds: ['s3', 's1'] }), snapshot)).toEqual(['s3', 's1']);
    expect(affectedSources(job({ sourceIds: ['s2', 'deleted-since'] }), snapshot)).toEqual(['s2']);
    expect(affectedSources(job({ sourceIds: ['deleted-since'] }), snapshot)).toEqual([]);
  });
});

describe('deleteNotices', () => {
  const sources = ['s1', 's2', 's3'];
  const notices = (j: RegulationJob, userIds: readonly string[]) => deleteNotices(j, sources, snapshot, userIds);

  it('plans one notice per user and source with an enabled Webhooks destination', () => {
    const planned = notices(job(), ['alice', 'bob']);
    expect(planned).toHaveLength(4);
    expect(planned.map((p) => `${p.call.userId}@${p.sourceId}→${p.destinationId}`).sort()).toEqual([
      'alice@s1→d-both',
      'alice@s2→d-both',
      'bob@s1→d-both',
      'bob@s2→d-both',
    ]);
    for (const userId of ['alice', 'bob']) expect(planned.filter((p) => p.call.userId === userId)).toHaveLength(2);
  });

  it('sends {type, messageId, userId, timestamp: createdAt, regulationId} and nothing else, under the usual delivery job id', () => {
    for (const p of notices(job(), ['alice'])) {
      const call = p.call as DeleteNotice;
      expect(Object.keys(call).sort()).toEqual(['messageId', 'regulationId', 'timestamp', 'type', 'userId']);
      expect(call).toEqual({
        type: 'delete',
        messageId: call.messageId,
        userId: 'alice',
        timestamp: '2026-11-21T10:00:00.000Z',
        regulationId: 'reg_1',
      });
      expect(p.jobId).toBe(callDeliveryId(p.destinationId, p.sourceId, call.messageId));
      expect(p).not.toHaveProperty('retry');
    }
  });

  it('uses one messageId per user and source, the same when planned again', () => {
    const first = notices(job(), ['alice', 'bob']);
    const again = notices(job(), ['alice', 'bob']);
    expect(again.map((p) => p.jobId)).toEqual(first.map((p) => p.jobId));
    expect(again.map((p) => p.call.messageId)).toEqual(first.map((p) => p.call.messageId));
    // Two notices that reach one receiver (two sources, one URL) are two notifications, not a resend.
    const aliceIds = new Set(first.filter((p) => p.call.userId === 'alice').map((p) => p.call.messageId));
    expect(aliceIds.size).toBe(2);
    expect(new Set(first.map((p) => p.jobId)).size).toBe(4);
  });

  it('gives other messageIds to other users and other regulations', () => {
    const messageId = (j: RegulationJob, userId: string) => notices(j, [userId])[0]!.call.messageId;
    expect(messageId(job(), 'alice')).not.toBe(messageId(job(), 'bob'));
    expect(messageId(job(), 'alice')).not.toBe(messageId(job({}, 'reg_2'), 'alice'));
  });

  it.each(['alice', 'Jürgen Müller', 'user with spaces', 'ユーザー/1:2', 'a'.repeat(1000)])(
    'keeps the messageId of %j header-safe',
    (userId) => {
      const [first] = notices(job(), [userId]);
      expect(first!.call.messageId).toMatch(/^del-reg_1-[A-Za-z0-9_-]+$/);
      expect(first!.call.messageId.length).toBeLessThanOrEqual('del-reg_1-'.length + 22);
      expect(first!.call.userId).toBe(userId);
    },
  );

  it('plans nothing for sources without an enabled destination, or no users', () => {
    expect(deleteNotices(job(), ['s3'], snapshot, ['alice'])).toEqual([]);
    expect(deleteNotices(job(), [], snapshot, ['alice'])).toEqual([]);
    expect(deleteNotices(job(), sources, snapshot, [])).toEqual([]);
  });
});

describe('deletes / suppresses', () => {
  it.each<[RegulationCreate['regulationType'], boolean, boolean]>([
    ['DELETE', true, false],
    ['SUPPRESS', false, true],
    ['SUPPRESS_WITH_DELETE', true, true],
  ])('%s: deletes %s, suppresses %s', (regulationType, del, sup) => {
    expect(deletes(job({ regulationType }))).toBe(del);
    expect(suppresses(job({ regulationType }))).toBe(sup);
  });
});
