import { inspectJsonText, itemsNeedMeasuring } from './json-text';
import { ValidationError } from '@eventrelay/config';
import { interpretBody, type InterpretContext } from './interpret.js';
import { MAX_BATCH_ITEMS, MAX_CALL_BYTES, MAX_ID_LENGTH, MAX_TRAIT_KEY_LENGTH } from './limits.js';
import { routeFor, type IntakeRoute } from './routes.js';

const RECEIVED_AT = Date.parse('2026-11-21T09:30:00.000Z');
const RECEIVED_ISO = '2026-11-21T09:30:00.000Z';
const BATCH: IntakeRoute = { kind: 'batch' };

function context(body: unknown, overrides: Partial<InterpretContext> = {}): InterpretContext {
  let n = 0;
  return { receivedAt: RECEIVED_AT, newMessageId: () => `gen-${++n}`, measureItems: true, ...overrides };
}

function interpret(route: IntakeRoute, body: Record<string, unknown>, overrides: Partial<InterpretContext> = {}) {
  return interpretBody(route, body, context(body, overrides));
}

function thrown(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) return err;
    throw err;
  }
  throw new Error('expected a ValidationError');
}

describe('interpretBody, single calls', () => {
  it('accepts one normalized call typed by the route', () => {
    const body = { userId: 'u1', event: 'Bought', properties: { price: 9.5 }, writeKey: 'wk' };
    expect(interpret({ kind: 'single', type: 'track' }, body)).toEqual({
      accepted: [
        {
          type: 'track',
          messageId: 'gen-1',
          userId: 'u1',
          event: 'Bought',
          properties: { price: 9.5 },
          receivedAt: RECEIVED_ISO,
          timestamp: RECEIVED_ISO,
        },
      ],
      rejected: [],
    });
  });

  it('throws invalid_event naming the field when the call is invalid', () => {
    const err = thrown(() => interpret({ kind: 'single', type: 'track' }, { userId: 'u1' }));
    expect(err.code).toBe('invalid_event');
    expect(err.httpStatus).toBe(400);
    expect(err.message).toBe('track requires event');
  });

  it('throws invalid_event for a wrong field type', () => {
    const err = thrown(() => interpret({ kind: 'single', type: 'identify' }, { userId: 'u1', traits: ['a'] }));
    expect(err.code).toBe('invalid_event');
    expect(err.message).toContain('traits');
  });

  it('ignores a batch key on a single-call route', () => {
    const { accepted } = interpret({ kind: 'single', type: 'identify' }, { userId: 'u1', batch: 'not an array' });
    expect(accepted).toHaveLength(1);
    expect(accepted[0]?.['batch']).toBe('not an array');
  });

  it('uses the call sentAt for clock-skew correction', () => {
    const { accepted } = interpret(
      { kind: 'single', type: 'page' },
      { anonymousId: 'a1', timestamp: '2026-11-21T09:00:00Z', sentAt: '2026-11-21T09:00:30Z' },
    );
    expect(accepted[0]?.timestamp).toBe('2026-11-21T09:29:30.000Z');
  });

  it('does not size-check single calls: the body reader bounds them', () => {
    const body = { userId: 'u1', traits: { blob: 'x'.repeat(MAX_CALL_BYTES) } };
    expect(interpret({ kind: 'single', type: 'identify' }, body).accepted).toHaveLength(1);
  });
});

describe('interpretBody, batches', () => {
  it('accepts every valid item, each with its own type', () => {
    const body = {
      batch: [
        { type: 'identify', userId: 'u1', traits: { name: 'Ada' } },
        { type: 'track', userId: 'u1', event: 'Signed Up', messageId: 'm-2' },
        { type: 'page', anonymousId: 'a1', name: 'Home' },
        { type: 'screen', userId: 'u1', name: 'Settings' },
        { type: 'group', userId: 'u1', groupId: 'g1' },
        { type: 'alias', userId: 'u2', previousId: 'u1' },
      ],
    };
    const { accepted, rejected } = interpret(BATCH, body);
    expect(rejected).toEqual([]);
    expect(accepted.map((c) => c.type)).toEqual(['identify', 'track', 'page', 'screen', 'group', 'alias']);
    expect(accepted.map((c) => c.messageId)).toEqual(['gen-1', 'm-2', 'gen-2', 'gen-3', 'gen-4', 'gen-5']);
    expect(accepted.every((c) => c.receivedAt === RECEIVED_ISO)).toBe(true);
  });

  it('accepts an empty batch', () => {
    expect(interpret(BATCH, { batch: [] })).toEqual({ accepted: [], rejected: [] });
  });

  it.each([[undefined], [null], ['[]'], [{ 0: { type: 'track' } }], [3]])('throws invalid_request when batch is %p', (batch) => {
    const err = thrown(() => interpret(BATCH, batch === undefined ? {} : { batch }));
    expect(err.code).toBe('invalid_request');
    expect(err.message).toBe('batch must be an array');
  });

  describe('rejected items', () => {
    it('lists invalid items by index and code and keeps the valid ones', () => {
      const body = {
        batch: [
          { type: 'track', userId: 'u1', event: 'Ok 0' },
          { type: 'track', userId: 'u1' },
          42,
          null,
          ['type', 'track'],
          { userId: 'u1', event: 'No type' },
          { type: 'Track', userId: 'u1', event: 'Wrong case' },
          { type: 'identify' },
          { type: 'alias', userId: 'u2' },
          { type: 'group', userId: 'u1', groupId: 'g', traits: [] },
          { type: 'identify', userId: 'u1', messageId: '' },
          { type: 'identify', userId: 'u1', event: 'Ok 11' },
        ],
      };
      const { accepted, rejected } = interpret(BATCH, body);
      expect(accepted.map((c) => c['event'])).toEqual(['Ok 0', 'Ok 11']);
      const typeMessage = 'type must be one of identify, track, page, screen, group, alias';
      expect(rejected).toEqual([
        { index: 1, code: 'invalid_event', message: 'track requires event' },
        { index: 2, code: 'invalid_event', message: 'batch item must be an object' },
        { index: 3, code: 'invalid_event', message: 'batch item must be an object' },
        { index: 4, code: 'invalid_event', message: 'batch item must be an object' },
        { index: 5, code: 'invalid_event', message: typeMessage },
        { index: 6, code: 'invalid_event', message: typeMessage },
        { index: 7, code: 'invalid_event', message: 'identify requires userId or anonymousId' },
        { index: 8, code: 'invalid_event', message: 'alias requires previousId' },
        { index: 9, code: 'invalid_event', message: 'traits must be an object' },
        { index: 10, code: 'invalid_event', message: 'messageId must be a non-empty string of at most 100 characters' },
      ]);
    });

    it('rejects an item over a length limit by name and keeps the rest of the batch', () => {
      const body = {
        batch: [
          { type: 'identify', userId: 'u'.repeat(MAX_ID_LENGTH + 1) },
          { type: 'track', userId: 'u1', event: 'Kept', messageId: 'm1' },
          { type: 'identify', userId: 'u2', traits: { ['k'.repeat(MAX_TRAIT_KEY_LENGTH + 1)]: 1 } },
        ],
      };
      const { accepted, rejected } = interpret(BATCH, body);
      expect(accepted.map((c) => c.messageId)).toEqual(['m1']);
      expect(rejected).toEqual([
        { index: 0, code: 'invalid_event', message: `userId is ${MAX_ID_LENGTH + 1} characters; at most ${MAX_ID_LENGTH} are allowed` },
        {
          index: 2,
          code: 'invalid_event',
          message: `traits has a key of ${MAX_TRAIT_KEY_LENGTH + 1} characters; at most ${MAX_TRAIT_KEY_LENGTH} are allowed`,
        },
      ]);
    });

    it('accepts nothing and rejects everything when no item is valid', () => {
      const { accepted, rejected } = interpret(BATCH, { batch: [{ type: 'track' }, { type: 'nope' }] });
      expect(accepted).toEqual([]);
      expect(rejected.map((r) => r.index)).toEqual([0, 1]);
    });

    it('does not draw message ids for rejected items', () => {
      const { accepted } = interpret(BATCH, { batch: [{ type: 'track' }, { type: 'identify', userId: 'u1' }] });
      expect(accepted[0]?.messageId).toBe('gen-1');
    });
  });

  describe('item count', () => {
    const item = { type: 'track', userId: 'u1', event: 'E', messageId: 'm' };

    it(`accepts ${MAX_BATCH_ITEMS} items`, () => {
      expect(MAX_BATCH_ITEMS).toBe(2500);
      const body = { batch: Array.from({ length: 2500 }, () => ({ ...item })) };
      const { accepted, rejected } = interpret(BATCH, body);
      expect(accepted).toHaveLength(2500);
      expect(rejected).toEqual([]);
    });

    it('throws payload_too_large for 2501 items, before looking at any of them', () => {
      const body = { batch: Array.from({ length: 2501 }, () => ({ type: 'invalid' })) };
      const err = thrown(() => interpret(BATCH, body));
      expect(err.code).toBe('payload_too_large');
      expect(err.message).toContain('2501');
      expect(err.message).toContain('2500');
    });
  });

  describe('envelope', () => {
    it('merges the envelope context and integrations under each item, the item winning', () => {
      const body = {
        writeKey: 'wk',
        context: { library: { name: 'analytics-node', version: '6.2.0' }, ip: '203.0.113.7', locale: 'de-DE' },
        integrations: { All: false, Webhooks: true, Mixpanel: true },
        batch: [
          { type: 'identify', userId: 'u1', context: { ip: '198.51.100.1', timezone: 'UTC' }, integrations: { Webhooks: false } },
          { type: 'identify', userId: 'u2' },
          { type: 'identify', userId: 'u3', context: null, integrations: null },
        ],
      };
      const { accepted } = interpret(BATCH, body);
      expect(accepted[0]?.context).toEqual({
        library: { name: 'analytics-node', version: '6.2.0' },
        ip: '198.51.100.1',
        locale: 'de-DE',
        timezone: 'UTC',
      });
      expect(accepted[0]?.integrations).toEqual({ All: false, Webhooks: false, Mixpanel: true });
      expect(accepted[1]?.context).toEqual(body.context);
      expect(accepted[1]?.integrations).toEqual(body.integrations);
      expect(accepted[2]?.context).toEqual(body.context);
      expect(accepted[2]?.integrations).toEqual(body.integrations);
      for (const call of accepted) expect(call).not.toHaveProperty('writeKey');
    });

    it('merges one level deep: a nested object of the item replaces the envelope one', () => {
      const body = {
        context: { library: { name: 'a', version: '1' } },
        batch: [{ type: 'identify', userId: 'u1', context: { library: { name: 'b' } } }],
      };
      expect(interpret(BATCH, body).accepted[0]?.context).toEqual({ library: { name: 'b' } });
    });

    it('does not change the envelope or the items it was given', () => {
      const body = {
        context: { ip: '1.1.1.1' },
        integrations: { All: true },
        batch: [{ type: 'identify', userId: 'u1', context: { locale: 'en' } }],
      };
      const before = structuredClone(body);
      const { accepted } = interpret(BATCH, body);
      accepted[0]!.context!['mutated'] = true;
      expect(body).toEqual(before);
    });

    it('ignores an envelope context or integrations that is not an object', () => {
      const body = { context: 'ctx', integrations: ['x'], batch: [{ type: 'identify', userId: 'u1' }] };
      const { accepted, rejected } = interpret(BATCH, body);
      expect(rejected).toEqual([]);
      expect(accepted[0]).not.toHaveProperty('context');
      expect(accepted[0]).not.toHaveProperty('integrations');
    });

    it('still rejects an item whose own context is not an object', () => {
      const body = { context: { ip: '1.1.1.1' }, batch: [{ type: 'identify', userId: 'u1', context: 'mine' }] };
      expect(interpret(BATCH, body).rejected).toEqual([{ index: 0, code: 'invalid_event', message: 'context must be an object' }]);
    });

    it('uses the envelope sentAt for items without their own', () => {
      const body = {
        sentAt: '2026-11-21T09:00:10.000Z',
        batch: [
          { type: 'identify', userId: 'u1', timestamp: '2026-11-21T09:00:00.000Z' },
          { type: 'identify', userId: 'u2', timestamp: '2026-11-21T09:00:00.000Z', sentAt: '2026-11-21T09:00:01.000Z' },
          { type: 'identify', userId: 'u3' },
        ],
      };
      const { accepted } = interpret(BATCH, body);
      expect(accepted.map((c) => [c.sentAt, c.timestamp])).toEqual([
        ['2026-11-21T09:00:10.000Z', '2026-11-21T09:29:50.000Z'],
        ['2026-11-21T09:00:01.000Z', '2026-11-21T09:29:59.000Z'],
        ['2026-11-21T09:00:10.000Z', RECEIVED_ISO],
      ]);
    });

    it('does not copy other envelope keys onto the items', () => {
      const body = { messageId: 'envelope-id', writeKey: 'wk', extra: 1, batch: [{ type: 'identify', userId: 'u1' }] };
      const [call] = interpret(BATCH, body).accepted;
      expect(call?.messageId).toBe('gen-1');
      expect(call).not.toHaveProperty('extra');
      expect(call).not.toHaveProperty('writeKey');
    });
  });

  describe('per-item size limit', () => {
    /** An identify whose JSON (with the given envelope merged in) is exactly `bytes` long. */
    function itemOfSize(bytes: number, envelopeContext?: Record<string, unknown>): Record<string, unknown> {
      const item = { type: 'identify', userId: 'u1', traits: { blob: '' } };
      const merged = envelopeContext ? { ...item, context: envelopeContext } : item;
      const base = Buffer.byteLength(JSON.stringify(merged));
      item.traits.blob = 'x'.repeat(bytes - base);
      expect(Buffer.byteLength(JSON.stringify(envelopeContext ? { ...item, context: envelopeContext } : item))).toBe(bytes);
      return item;
    }

    it(`accepts an item of exactly ${MAX_CALL_BYTES} bytes and rejects one of a byte more`, () => {
      const body = { batch: [itemOfSize(MAX_CALL_BYTES), itemOfSize(MAX_CALL_BYTES + 1), { type: 'identify', userId: 'small' }] };
      const { accepted, rejected } = interpret(BATCH, body);
      expect(accepted.map((c) => c.userId)).toEqual(['u1', 'small']);
      expect(rejected).toEqual([
        {
          index: 1,
          code: 'payload_too_large',
          message: `call is ${MAX_CALL_BYTES + 1} bytes with the batch context merged in; at most ${MAX_CALL_BYTES} are allowed`,
        },
      ]);
    });

    it('measures multi-byte characters in bytes, not characters', () => {
      const item = { type: 'identify', userId: 'u1', traits: { blob: 'é'.repeat(17_000) } };
      expect(JSON.stringify(item).length).toBeLessThan(MAX_CALL_BYTES);
      const { rejected } = interpret(BATCH, { batch: [item] });
      expect(rejected.map((r) => r.code)).toEqual(['payload_too_large']);
    });

    it('measures each item with the envelope context merged in', () => {
      const envelopeContext = { padding: 'p'.repeat(10_000) };
      const fits = itemOfSize(MAX_CALL_BYTES, envelopeContext);
      const over = itemOfSize(MAX_CALL_BYTES + 1, envelopeContext);
      // On its own the oversize item is well under the limit: only the merge puts it over.
      expect(Buffer.byteLength(JSON.stringify(over))).toBeLessThan(MAX_CALL_BYTES - 9_000);
      const { accepted, rejected } = interpret(BATCH, { context: envelopeContext, batch: [fits, over] });
      expect(accepted).toHaveLength(1);
      expect(accepted[0]?.context).toEqual(envelopeContext);
      expect(rejected).toEqual([{ index: 1, code: 'payload_too_large', message: expect.stringContaining(`${MAX_CALL_BYTES + 1} bytes`) }]);
    });

    // Re-serializing can grow a call (1e20 is stored as 100000000000000000000), so the verdict on an item must
    // not depend on how big its siblings make the body.
    it('measures items only when the body is over the limit or has a number with an exponent outside strings', () => {
      const small = `{"batch":[{"type":"track","userId":"u","event":"E","properties":{"n":12.5,"s":"x:1e5 in a string","t":true,"f":false}}]}`;
      expect(itemsNeedMeasuring(inspectJsonText(small), Buffer.byteLength(small), MAX_CALL_BYTES)).toBe(false);
      const plain = `{"batch":[{"type":"track","userId":"u","anonymousId":"3f1c2a9e-5b7d","event":"E","properties":{"n":12.5,"m":[1,2.5E3]}}]}`;
      expect(itemsNeedMeasuring(inspectJsonText(plain), Buffer.byteLength(plain), MAX_CALL_BYTES)).toBe(true);
      const uuidOnly = plain.replace(',2.5E3', '');
      expect(itemsNeedMeasuring(inspectJsonText(uuidOnly), Buffer.byteLength(uuidOnly), MAX_CALL_BYTES)).toBe(false);
      expect(itemsNeedMeasuring(inspectJsonText(uuidOnly), MAX_CALL_BYTES + 1, MAX_CALL_BYTES)).toBe(true);
    });

    it('gives an item the same verdict whatever else is in the batch', () => {
      const grows = `{"type":"track","userId":"u1","event":"E","properties":{"v":[${Array(6000).fill('1e20').join(',')}]}}`;
      const padding = `{"type":"identify","userId":"u2","traits":{"blob":"${'x'.repeat(10_000)}"}}`;
      const verdict = (text: string) => {
        const body = JSON.parse(text) as Record<string, unknown>;
        return interpretBody(
          BATCH,
          body,
          context(body, { measureItems: itemsNeedMeasuring(inspectJsonText(text), Buffer.byteLength(text), MAX_CALL_BYTES) }),
        ).rejected.map((r) => r.index);
      };
      const alone = `{"batch":[${grows}]}`;
      const withSibling = `{"batch":[${grows},${padding}]}`;
      expect(Buffer.byteLength(alone)).toBeLessThan(MAX_CALL_BYTES);
      expect(Buffer.byteLength(withSibling)).toBeGreaterThan(MAX_CALL_BYTES);
      expect(verdict(alone)).toEqual(verdict(withSibling));
    });
  });
});

describe('routeFor with interpretBody', () => {
  it('types single calls from the short form of the path', () => {
    const route = routeFor('t');
    if (!route) throw new Error('no route');
    expect(interpretBody(route, { userId: 'u1', event: 'E', type: 'page' }, context({})).accepted[0]?.type).toBe('track');
  });
});
