import type { CallType } from './routes.js';
import { checkCall, isPlainObject, type RawCall } from './validate.js';
import { MAX_EVENT_LENGTH, MAX_ID_LENGTH, MAX_MESSAGE_ID_LENGTH, MAX_TRAIT_KEY_LENGTH } from './limits.js';

function accepted(raw: RawCall, type: CallType): RawCall {
  const result = checkCall(raw, type);
  if (!result.ok) throw new Error(`expected ${type} to pass, got: ${result.problem.message}`);
  return result.call;
}

function problem(raw: RawCall, type: CallType): { field: string; message: string } {
  const result = checkCall(raw, type);
  if (result.ok) throw new Error(`expected ${type} to fail, got ${JSON.stringify(result.call)}`);
  return result.problem;
}

describe('isPlainObject', () => {
  it('is true only for non-null, non-array objects', () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject({ a: 1 })).toBe(true);
    expect(isPlainObject([])).toBe(false);
    expect(isPlainObject(null)).toBe(false);
    expect(isPlainObject(undefined)).toBe(false);
    expect(isPlainObject('x')).toBe(false);
    expect(isPlainObject(1)).toBe(false);
  });
});

describe('checkCall', () => {
  describe('required fields per type, the field named in the problem', () => {
    it.each<[CallType, RawCall, string, string]>([
      ['identify', { traits: { a: 1 } }, 'userId', 'identify requires userId or anonymousId'],
      ['page', { name: 'Home' }, 'userId', 'page requires userId or anonymousId'],
      ['screen', { name: 'Settings' }, 'userId', 'screen requires userId or anonymousId'],
      ['track', { userId: 'u1' }, 'event', 'track requires event'],
      ['track', { userId: 'u1', event: '' }, 'event', 'track requires event'],
      ['track', { event: 'Clicked' }, 'userId', 'track requires userId or anonymousId'],
      ['group', { userId: 'u1' }, 'groupId', 'group requires groupId'],
      ['group', { groupId: 'g1' }, 'userId', 'group requires userId or anonymousId'],
      ['alias', { previousId: 'p1' }, 'userId', 'alias requires userId'],
      ['alias', { userId: 'u1' }, 'previousId', 'alias requires previousId'],
      // An alias is about the user id: an anonymousId does not stand in for it.
      ['alias', { anonymousId: 'a1', previousId: 'p1' }, 'userId', 'alias requires userId'],
    ])('%s %j fails on %s', (type, raw, field, message) => {
      const p = problem(raw, type);
      expect(p).toEqual({ field, message });
      expect(p.message).toContain(field);
    });

    it.each<[CallType, RawCall]>([
      ['identify', { userId: 'u1' }],
      ['identify', { anonymousId: 'a1' }],
      ['page', { anonymousId: 'a1' }],
      ['screen', { userId: 'u1' }],
      ['track', { anonymousId: 'a1', event: 'Clicked' }],
      ['group', { anonymousId: 'a1', groupId: 'g1' }],
      ['alias', { userId: 'u1', previousId: 'p1' }],
    ])('%s %j passes', (type, raw) => {
      expect(accepted(raw, type)).toEqual(raw);
    });

    it('treats an empty id as absent', () => {
      expect(problem({ userId: '', anonymousId: '' }, 'identify').field).toBe('userId');
      expect(problem({ userId: 'u1', groupId: '' }, 'group').field).toBe('groupId');
      expect(problem({ userId: 'u1', previousId: '' }, 'alias').field).toBe('previousId');
      expect(accepted({ userId: '', anonymousId: 'a1' }, 'identify')).toEqual({ anonymousId: 'a1' });
    });

    it('treats a null id as absent', () => {
      expect(problem({ userId: null, anonymousId: null }, 'page').field).toBe('userId');
      expect(accepted({ userId: null, anonymousId: 'a1' }, 'page')).toEqual({ anonymousId: 'a1' });
    });
  });

  describe('ids sent as numbers', () => {
    it.each([
      ['userId', 12345, '12345'],
      ['userId', 0, '0'],
      ['userId', -7, '-7'],
      ['userId', 1.5, '1.5'],
      ['anonymousId', 42, '42'],
    ])('%s %p becomes %j', (field, value, text) => {
      const call = accepted({ [field]: value }, 'identify');
      expect(call[field]).toBe(text);
    });

    it('coerces groupId and previousId too', () => {
      expect(accepted({ userId: 1, groupId: 4711 }, 'group')).toEqual({ userId: '1', groupId: '4711' });
      expect(accepted({ userId: 2, previousId: 1 }, 'alias')).toEqual({ userId: '2', previousId: '1' });
    });

    it.each([
      ['userId', true],
      ['userId', {}],
      ['userId', ['u1']],
      ['anonymousId', false],
      ['anonymousId', { id: 'a' }],
    ])('refuses %s of type %p', (field, value) => {
      expect(problem({ [field]: value, event: 'x' }, 'track')).toEqual({ field, message: `${field} must be a string` });
    });

    it('refuses a non-string groupId and previousId by name', () => {
      expect(problem({ userId: 'u1', groupId: true }, 'group')).toEqual({ field: 'groupId', message: 'groupId must be a string' });
      expect(problem({ userId: 'u1', previousId: ['p'] }, 'alias')).toEqual({
        field: 'previousId',
        message: 'previousId must be a string',
      });
    });
  });

  describe('wrong types', () => {
    it.each([
      ['properties', 'text'],
      ['properties', []],
      ['properties', 3],
      ['traits', 'text'],
      ['traits', [1, 2]],
      ['context', 'text'],
      ['context', true],
      ['integrations', 'All'],
      ['integrations', [false]],
    ])('%s = %p is refused', (field, value) => {
      expect(problem({ userId: 'u1', event: 'E', [field]: value }, 'track')).toEqual({ field, message: `${field} must be an object` });
    });

    it.each([
      ['event', 7],
      ['event', { name: 'x' }],
      ['event', true],
      ['name', 5],
      ['name', ['Home']],
      ['category', 1],
    ])('%s = %p is refused', (field, value) => {
      expect(problem({ userId: 'u1', event: 'E', [field]: value }, 'track')).toEqual({ field, message: `${field} must be a string` });
    });

    it.each([[''], ['x'.repeat(101)], [123], [{}]])('messageId %p is refused', (messageId) => {
      const p = problem({ userId: 'u1', messageId }, 'identify');
      expect(p.field).toBe('messageId');
      expect(p.message).toContain('messageId');
    });

    it('accepts a messageId of exactly 100 characters', () => {
      const messageId = 'm'.repeat(100);
      expect(accepted({ userId: 'u1', messageId }, 'identify')['messageId']).toBe(messageId);
    });

    it('checks types on calls of every type, not only the one that uses the field', () => {
      expect(problem({ userId: 'u1', event: 9 }, 'identify').field).toBe('event');
      expect(problem({ userId: 'u1', traits: 'x' }, 'page').field).toBe('traits');
    });
  });

  describe('maximum lengths (docs/intake.md, "Limits")', () => {
    const over = (n: number) => 'x'.repeat(n + 1);
    it.each<[CallType, RawCall, string]>([
      ['identify', { userId: over(MAX_ID_LENGTH) }, 'userId'],
      ['identify', { anonymousId: over(MAX_ID_LENGTH) }, 'anonymousId'],
      ['group', { userId: 'u1', groupId: over(MAX_ID_LENGTH) }, 'groupId'],
      ['alias', { userId: 'u1', previousId: over(MAX_ID_LENGTH) }, 'previousId'],
      // Checked on every type, like the field types: an over-long id is refused wherever it travels.
      ['track', { userId: 'u1', event: 'E', groupId: over(MAX_ID_LENGTH) }, 'groupId'],
      ['track', { userId: 'u1', event: over(MAX_EVENT_LENGTH) }, 'event'],
      ['identify', { userId: 'u1', traits: { ok: 1, [over(MAX_TRAIT_KEY_LENGTH)]: 2 } }, 'traits'],
      ['identify', { userId: 'u1', messageId: over(MAX_MESSAGE_ID_LENGTH) }, 'messageId'],
    ])('%s over the limit on %s... is refused by name', (type, raw, field) => {
      const p = problem(raw, type);
      expect(p.field).toBe(field);
      expect(p.message).toContain(field);
      expect(p.message).toMatch(/at most \d+/);
    });

    it('names the length sent and the limit', () => {
      expect(problem({ userId: 'u'.repeat(30_000) }, 'identify').message).toBe(
        `userId is 30000 characters; at most ${MAX_ID_LENGTH} are allowed`,
      );
    });

    it('counts an id sent as a number by its decimal text, which is always short enough', () => {
      expect(accepted({ userId: Number.MAX_VALUE }, 'identify')['userId']).toBe(String(Number.MAX_VALUE));
    });

    it.each<[CallType, RawCall]>([
      ['identify', { userId: 'u'.repeat(MAX_ID_LENGTH), anonymousId: 'a'.repeat(MAX_ID_LENGTH) }],
      ['group', { userId: 'u1', groupId: 'g'.repeat(MAX_ID_LENGTH) }],
      ['alias', { userId: 'u1', previousId: 'p'.repeat(MAX_ID_LENGTH) }],
      ['track', { userId: 'u1', event: 'e'.repeat(MAX_EVENT_LENGTH) }],
      ['identify', { userId: 'u1', traits: { ['k'.repeat(MAX_TRAIT_KEY_LENGTH)]: 'v'.repeat(10_000) } }],
    ])('%s exactly at the limit passes', (type, raw) => {
      expect(accepted(raw, type)).toEqual(raw);
    });

    it('bounds the keys of traits, not their values or the keys of properties', () => {
      expect(accepted({ userId: 'u1', event: 'E', properties: { [over(MAX_TRAIT_KEY_LENGTH)]: 1 } }, 'track')).toBeDefined();
    });
  });

  describe('the copy it returns', () => {
    it('drops null fields and keeps every other field as sent', () => {
      const raw = {
        userId: 'u1',
        event: 'E',
        properties: null,
        context: { ip: null },
        channel: 'server',
        version: 2,
        custom: { deep: [1, null] },
      };
      expect(accepted(raw, 'track')).toEqual({
        userId: 'u1',
        event: 'E',
        context: { ip: null },
        channel: 'server',
        version: 2,
        custom: { deep: [1, null] },
      });
    });

    it('leaves out the time and write key fields', () => {
      const raw = {
        userId: 'u1',
        writeKey: 'secret-key',
        timestamp: '2026-11-21T09:30:00Z',
        originalTimestamp: '2026-11-21T09:29:00Z',
        sentAt: '2026-11-21T09:31:00Z',
        receivedAt: '1999-01-01T00:00:00Z',
      };
      expect(accepted(raw, 'identify')).toEqual({ userId: 'u1' });
    });

    it('does not change the call it was given', () => {
      const raw = { userId: 5, nothing: null, writeKey: 'k' };
      const before = structuredClone(raw);
      accepted(raw, 'identify');
      expect(raw).toEqual(before);
    });

    it('returns a new object', () => {
      const raw = { userId: 'u1' };
      expect(accepted(raw, 'identify')).not.toBe(raw);
    });

    it('drops a "__proto__" key, so fields hidden in it cannot pass the checks', () => {
      const raw = JSON.parse('{"__proto__": {"userId": "from-proto", "event": "Hidden"}, "anonymousId": "a1", "event": "Seen"}') as RawCall;
      expect(Object.keys(raw)).toContain('__proto__');
      const call = accepted(raw, 'track');
      expect(Object.getPrototypeOf(call)).toBe(Object.prototype);
      expect(Object.keys(call).sort()).toEqual(['anonymousId', 'event']);
      expect(call['userId']).toBeUndefined();
    });

    it('does not let a "__proto__" key supply a required field', () => {
      const raw = JSON.parse('{"__proto__": {"userId": "u1", "event": "Hidden"}}') as RawCall;
      expect(problem(raw, 'track').field).toBe('event');
      const identify = JSON.parse('{"__proto__": {"userId": "u1"}}') as RawCall;
      expect(problem(identify, 'identify').field).toBe('userId');
    });
  });
});
