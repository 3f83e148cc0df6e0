import { normalizeCall, normalizeContext } from './normalize.js';
import { checkCall, type RawCall } from './validate.js';
import type { CallType } from './routes.js';

const RECEIVED_AT = Date.parse('2026-11-21T09:30:00.000Z');

function ids(...list: string[]): () => string {
  const queue = [...list];
  return () => {
    const next = queue.shift();
    if (next === undefined) throw new Error('no more message ids');
    return next;
  };
}

function normalize(raw: RawCall, type: CallType, opts: { envelopeSentAt?: unknown; newMessageId?: () => string } = {}) {
  const checked = checkCall(raw, type);
  if (!checked.ok) throw new Error(checked.problem.message);
  return normalizeCall(raw, checked.call, type, normalizeContext(RECEIVED_AT, opts.envelopeSentAt, opts.newMessageId ?? ids('gen-1')));
}

describe('normalizeContext', () => {
  it('computes receivedAt once, in ISO form, and parses the envelope sentAt', () => {
    const newMessageId = ids();
    const ctx = normalizeContext(RECEIVED_AT, '2026-11-21T10:29:58+01:00', newMessageId);
    expect(ctx).toEqual({
      receivedAt: RECEIVED_AT,
      receivedAtIso: '2026-11-21T09:30:00.000Z',
      envelopeSentAt: Date.parse('2026-11-21T09:29:58.000Z'),
      envelopeSentAtIso: '2026-11-21T09:29:58.000Z',
      newMessageId,
    });
  });

  it('treats an unparseable envelope sentAt as absent', () => {
    expect(normalizeContext(RECEIVED_AT, 'soon', ids()).envelopeSentAt).toBeUndefined();
    expect(normalizeContext(RECEIVED_AT, 12345, ids()).envelopeSentAt).toBeUndefined();
    expect(normalizeContext(RECEIVED_AT, undefined, ids()).envelopeSentAt).toBeUndefined();
  });
});

describe('normalizeCall', () => {
  it('sets type, a generated messageId, receivedAt and timestamp = receivedAt when the call has no times', () => {
    expect(normalize({ userId: 'u1', traits: { plan: 'pro' } }, 'identify')).toEqual({
      type: 'identify',
      messageId: 'gen-1',
      userId: 'u1',
      traits: { plan: 'pro' },
      receivedAt: '2026-11-21T09:30:00.000Z',
      timestamp: '2026-11-21T09:30:00.000Z',
    });
  });

  it('keeps the messageId the call brought and does not draw a new one', () => {
    const newMessageId = jest.fn(() => 'gen-unused');
    const call = normalize({ userId: 'u1', messageId: 'client-1' }, 'identify', { newMessageId });
    expect(call.messageId).toBe('client-1');
    expect(newMessageId).not.toHaveBeenCalled();
  });

  it('draws one new messageId per call without one', () => {
    const next = ids('gen-a', 'gen-b');
    const ctx = normalizeContext(RECEIVED_AT, undefined, next);
    const a = checkCall({ userId: 'u1' }, 'identify');
    const b = checkCall({ userId: 'u2' }, 'identify');
    if (!a.ok || !b.ok) throw new Error('unexpected');
    expect(normalizeCall({ userId: 'u1' }, a.call, 'identify', ctx).messageId).toBe('gen-a');
    expect(normalizeCall({ userId: 'u2' }, b.call, 'identify', ctx).messageId).toBe('gen-b');
  });

  it('corrects clock skew: timestamp = receivedAt - (sentAt - originalTimestamp)', () => {
    const call = normalize(
      { userId: 'u1', event: 'E', timestamp: '2026-11-21T08:00:00.000Z', sentAt: '2026-11-21T08:00:04.321Z' },
      'track',
    );
    expect(call.timestamp).toBe('2026-11-21T09:29:55.679Z');
    expect(call.originalTimestamp).toBe('2026-11-21T08:00:00.000Z');
    expect(call.sentAt).toBe('2026-11-21T08:00:04.321Z');
    expect(call.receivedAt).toBe('2026-11-21T09:30:00.000Z');
  });

  it('stores every time as ISO 8601 UTC with milliseconds whatever form it came in', () => {
    const call = normalize({ userId: 'u1', event: 'E', timestamp: '2016-04-26T11:14:48-0700', sentAt: '2016-04-26 18:14:49.5' }, 'track');
    expect(call.originalTimestamp).toBe('2016-04-26T18:14:48.000Z');
    expect(call.sentAt).toBe('2016-04-26T18:14:49.500Z');
    expect(call.timestamp).toBe('2026-11-21T09:29:58.500Z');
  });

  it('uses originalTimestamp when timestamp is absent or unparseable', () => {
    expect(normalize({ userId: 'u1', originalTimestamp: '2026-11-21T09:00:00Z' }, 'identify')).toMatchObject({
      originalTimestamp: '2026-11-21T09:00:00.000Z',
      timestamp: '2026-11-21T09:00:00.000Z',
    });
    expect(
      normalize({ userId: 'u1', timestamp: 'yesterday', originalTimestamp: '2026-11-21T09:00:00Z' }, 'identify').originalTimestamp,
    ).toBe('2026-11-21T09:00:00.000Z');
  });

  it('prefers timestamp over originalTimestamp when both parse', () => {
    const call = normalize({ userId: 'u1', timestamp: '2026-11-21T08:00:00Z', originalTimestamp: '2026-11-21T07:00:00Z' }, 'identify');
    expect(call.originalTimestamp).toBe('2026-11-21T08:00:00.000Z');
    expect(call.timestamp).toBe('2026-11-21T08:00:00.000Z');
  });

  it('keeps the original timestamp uncorrected when there is no sentAt', () => {
    const call = normalize({ userId: 'u1', timestamp: '2020-01-01T00:00:00.000Z' }, 'identify');
    expect(call.timestamp).toBe('2020-01-01T00:00:00.000Z');
    expect(call).not.toHaveProperty('sentAt');
  });

  it('uses the envelope sentAt when the call has none, and the call its own when it has one', () => {
    const envelopeSentAt = '2026-11-21T08:00:10.000Z';
    const fromEnvelope = normalize({ userId: 'u1', timestamp: '2026-11-21T08:00:00.000Z' }, 'identify', { envelopeSentAt });
    expect(fromEnvelope.sentAt).toBe('2026-11-21T08:00:10.000Z');
    expect(fromEnvelope.timestamp).toBe('2026-11-21T09:29:50.000Z');

    const own = normalize({ userId: 'u1', timestamp: '2026-11-21T08:00:00.000Z', sentAt: '2026-11-21T08:00:01.000Z' }, 'identify', {
      envelopeSentAt,
    });
    expect(own.sentAt).toBe('2026-11-21T08:00:01.000Z');
    expect(own.timestamp).toBe('2026-11-21T09:29:59.000Z');
  });

  it('falls back to the envelope sentAt when the call has an unparseable one', () => {
    const call = normalize({ userId: 'u1', timestamp: '2026-11-21T08:00:00.000Z', sentAt: 'later' }, 'identify', {
      envelopeSentAt: '2026-11-21T08:00:03.000Z',
    });
    expect(call.sentAt).toBe('2026-11-21T08:00:03.000Z');
    expect(call.timestamp).toBe('2026-11-21T09:29:57.000Z');
  });

  it('records sentAt but uses receivedAt when the original timestamp is absent', () => {
    const call = normalize({ userId: 'u1', sentAt: '2026-11-21T08:00:00.000Z' }, 'identify');
    expect(call.sentAt).toBe('2026-11-21T08:00:00.000Z');
    expect(call.timestamp).toBe('2026-11-21T09:30:00.000Z');
    expect(call).not.toHaveProperty('originalTimestamp');
  });

  it('replaces the time fields the client sent rather than passing them through', () => {
    const call = normalize(
      { userId: 'u1', timestamp: 'garbage', sentAt: 'garbage', receivedAt: '1999-01-01T00:00:00Z', originalTimestamp: 'garbage' },
      'identify',
    );
    expect(call).toEqual({
      type: 'identify',
      messageId: 'gen-1',
      userId: 'u1',
      receivedAt: '2026-11-21T09:30:00.000Z',
      timestamp: '2026-11-21T09:30:00.000Z',
    });
  });

  it('takes the type from the route, not from the body', () => {
    expect(normalize({ type: 'identify', userId: 'u1', event: 'E' }, 'track').type).toBe('track');
  });

  it('keeps unknown keys as sent and does not carry the write key', () => {
    const call = normalize(
      { userId: 'u1', writeKey: 'wk', channel: 'server', version: 2, context: { library: { name: 'x' } } },
      'identify',
    );
    expect(call['channel']).toBe('server');
    expect(call['version']).toBe(2);
    expect(call.context).toEqual({ library: { name: 'x' } });
    expect(call).not.toHaveProperty('writeKey');
  });
});
