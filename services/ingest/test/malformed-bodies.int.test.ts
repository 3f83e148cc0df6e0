/**
 * Robustness of the intake against malformed requests (docs/spec.md §2): a few hundred requests,
 * generated deterministically from a seeded PRNG, sent as raw bytes to the real ingest on real
 * Redis. Every answer must be a JSON 4xx error with a registered `code` (never a 5xx, a 3xx, a
 * non-JSON body, a hang or a dropped connection), the code must be the one docs/spec.md §2 names
 * where it names one, nothing malformed may reach the route queue, and the process must still
 * serve afterwards.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import { errorCodes, type ErrorCode } from '@eventrelay/config';
import { post, startTestIngest, type TestIngest } from '../../../test/support/ingest';
import { seededRandom } from '../../../test/support/seeded-random';

// ---------------------------------------------------------------------------------------------
// Deterministic generation
// ---------------------------------------------------------------------------------------------

const SEED = 0x5eed_2026;

const CATEGORIES = [
  'truncated-json',
  'wrong-types',
  'batch-envelope',
  'batch-items',
  'huge',
  'envelope-merge',
  'deep-nesting',
  'invalid-utf8',
  'content-encoding',
  'nul-bytes',
  'empty-body',
  'top-level',
  'content-type',
  'write-key',
  'routes-methods',
] as const;
type Category = (typeof CATEGORIES)[number];

type AuthMode = 'basic' | 'none' | 'unknown' | 'bearer';

/** What the answer must be. */
type Expectation =
  /** A 4xx error whose code is one of these (the status follows from the code's registry entry). */
  | { kind: 'error'; codes: readonly ErrorCode[] }
  /** docs/spec.md §2: a batch with invalid items is 200, listing every dropped item in `rejected`. */
  | { kind: 'batch-rejected'; rejected: readonly { index: number; code: 'invalid_event' | 'payload_too_large' }[] }
  /**
   * docs/spec.md §2 drops an item made oversize by the envelope merge (200, listed as
   * payload_too_large); this robustness test also takes the request refused (400) or the items accepted (200).
   * It never takes a 5xx: the request is within every limit and Redis is up.
   */
  | { kind: 'batch-any-but-5xx' };

interface Case {
  readonly category: Category;
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  /** Send with Transfer-Encoding: chunked, in a few pieces, instead of a Content-Length. */
  readonly chunked: boolean;
  readonly expect: Expectation;
}

const SINGLE_ROUTES = ['identify', 'track', 'page', 'screen', 'group', 'alias', 'i', 't', 'p', 's', 'g', 'a'] as const;
const BATCH_ROUTES = ['batch', 'import', 'b'] as const;

const SINGLE_LIMIT = 32 * 1024;
const BATCH_LIMIT = 500 * 1024;

/** A call that is valid on any single-call route (it has every field any type requires). */
function validCall(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    userId: 'user-1',
    anonymousId: 'anon-1',
    event: 'Order Completed',
    groupId: 'group-1',
    previousId: 'user-0',
    name: 'Checkout',
    properties: { revenue: 42.5, currency: 'EUR', items: [{ sku: 'A-1', qty: 2 }], note: 'café ☕ 🍰' },
    traits: { plan: 'team' },
    context: { library: { name: 'malformed-test', version: '1.0.0' }, locale: 'fr-FR' },
    timestamp: '2026-11-21T09:29:58.000Z',
    messageId: 'mid-0001',
    ...extra,
  };
}

/** JSON text with `"__RAW__"` replaced by raw text that JSON.stringify cannot produce. */
function jsonWithRaw(value: unknown, raw: string): string {
  return JSON.stringify(value).replace('"__RAW__"', raw);
}

function generateCases(writeKey: string): Case[] {
  const rnd = seededRandom(SEED);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)] as T;
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => int(0, 255)));
  let singleTurn = 0;
  let batchTurn = 0;
  const slash = () => (rnd() < 0.2 ? '/' : '');
  const singleRoute = () => SINGLE_ROUTES[singleTurn++ % SINGLE_ROUTES.length] as (typeof SINGLE_ROUTES)[number];
  const singlePath = () => `/v1/${singleRoute()}${slash()}`;
  const batchPath = () => `/v1/${BATCH_ROUTES[batchTurn++ % BATCH_ROUTES.length] as string}${slash()}`;
  const anyPath = () => (rnd() < 0.6 ? singlePath() : batchPath());
  const isBatchPath = (path: string) => /^\/v1\/(batch|import|b)\/?$/.test(path);
  const contentType = () => pick(['application/json', 'application/json; charset=utf-8', 'text/plain', 'text/plain;charset=UTF-8', '']);

  const cases: Case[] = [];

  function authHeaders(mode: AuthMode): Record<string, string> {
    switch (mode) {
      case 'basic':
        return { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` };
      case 'unknown':
        return { authorization: `Basic ${Buffer.from('wk_nobody_has_this_key:').toString('base64')}` };
      case 'bearer':
        return { authorization: `Bearer ${writeKey}` };
      case 'none':
        return {};
    }
  }
  /** docs/spec.md §2 does not order auth against body checks, so without a usable key either code is right. */
  function withAuth(mode: AuthMode, codes: readonly ErrorCode[]): readonly ErrorCode[] {
    if (mode === 'none' || mode === 'bearer') return [...codes, 'missing_write_key'];
    if (mode === 'unknown') return [...codes, 'unknown_write_key'];
    return codes;
  }
  /** Mostly a valid Basic key; sometimes none or an unknown one, to cover the unauthenticated path. */
  const someAuth = (): AuthMode => {
    const r = rnd();
    return r < 0.7 ? 'basic' : r < 0.8 ? 'none' : r < 0.9 ? 'unknown' : 'bearer';
  };

  function add(
    category: Category,
    name: string,
    body: Buffer | string,
    opts: {
      path?: string;
      method?: string;
      auth?: AuthMode;
      headers?: Record<string, string>;
      codes?: readonly ErrorCode[];
      expect?: Expectation;
      chunked?: boolean;
    } = {},
  ): void {
    const auth = opts.auth ?? 'basic';
    const ct = contentType();
    const headers: Record<string, string> = { ...(ct ? { 'content-type': ct } : {}), ...authHeaders(auth), ...opts.headers };
    const expectation: Expectation = opts.expect ?? { kind: 'error', codes: withAuth(auth, opts.codes ?? ['invalid_request']) };
    cases.push({
      category,
      name,
      method: opts.method ?? 'POST',
      path: opts.path ?? anyPath(),
      headers,
      body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
      chunked: opts.chunked ?? rnd() < 0.25,
      expect: expectation,
    });
  }
  /** payload_too_large when the (inflated) body is over the route's limit, else `codes`. */
  const bySize = (path: string, inflatedBytes: number, codes: readonly ErrorCode[]): readonly ErrorCode[] =>
    inflatedBytes > (isBatchPath(path) ? BATCH_LIMIT : SINGLE_LIMIT) ? ['payload_too_large'] : codes;

  // --- truncated JSON: valid bodies cut every few bytes (every prefix is invalid JSON) ---------
  const truncSources: [string, () => string][] = [
    ['single', singlePath],
    ['batch', batchPath],
  ];
  const fullSingle = JSON.stringify(
    validCall({
      properties: { text: 'ünïcödé — 日本語 — 🎉', list: [1, 2.5, -3e-7, true, false, null], nested: { a: { b: { c: 'd' } } } },
    }),
  );
  const fullBatch = JSON.stringify({
    batch: [
      { type: 'track', ...validCall({ messageId: 'b-1' }) },
      { type: 'identify', userId: 'u-2', traits: { email: 'x@example.com', name: 'Zoë' }, messageId: 'b-2' },
    ],
    context: { ip: '203.0.113.9' },
    sentAt: '2026-11-21T09:30:00.000Z',
  });
  for (const [kind, pathOf] of truncSources) {
    const full = Buffer.from(kind === 'single' ? fullSingle : fullBatch, 'utf8');
    for (let cut = 0; cut < full.length; cut += int(5, 13)) {
      const auth = someAuth();
      add('truncated-json', `${kind} cut at ${cut}/${full.length} bytes`, full.subarray(0, cut), {
        path: pathOf(),
        auth,
        codes: ['invalid_request'],
      });
    }
  }

  // --- wrong types in a single call (invalid_event: the call is a JSON object, a field is wrong) --
  const badValues: [string, string][] = [
    ['object', '{"id":"u"}'],
    ['empty object', '{}'],
    ['array', '["u"]'],
    ['empty array', '[]'],
    ['true', 'true'],
    ['false', 'false'],
  ];
  for (const field of ['userId', 'anonymousId', 'groupId', 'previousId']) {
    for (const [label, raw] of badValues)
      add('wrong-types', `${field} as ${label}`, jsonWithRaw(validCall({ [field]: '__RAW__' }), raw), {
        path: singlePath(),
        codes: ['invalid_event'],
      });
  }
  add('wrong-types', 'userId as 1e999 (Infinity after parsing)', jsonWithRaw(validCall({ userId: '__RAW__' }), '1e999'), {
    path: singlePath(),
    codes: ['invalid_event'],
  });
  add('wrong-types', 'userId as -1e999', jsonWithRaw(validCall({ userId: '__RAW__' }), '-1e999'), {
    path: singlePath(),
    codes: ['invalid_event'],
  });
  for (const [label, raw] of [
    ['number', '42'],
    ['zero', '0'],
    ['object', '{"name":"x"}'],
    ['array', '["x"]'],
    ['true', 'true'],
  ] as const) {
    add('wrong-types', `event as ${label}`, jsonWithRaw(validCall({ event: '__RAW__' }), raw), {
      path: singlePath(),
      codes: ['invalid_event'],
    });
    add('wrong-types', `name as ${label}`, jsonWithRaw(validCall({ name: '__RAW__' }), raw), {
      path: singlePath(),
      codes: ['invalid_event'],
    });
    add('wrong-types', `category as ${label}`, jsonWithRaw(validCall({ category: '__RAW__' }), raw), {
      path: singlePath(),
      codes: ['invalid_event'],
    });
  }
  for (const field of ['properties', 'traits', 'context', 'integrations']) {
    for (const [label, raw] of [
      ['array', '[1,2]'],
      ['empty array', '[]'],
      ['string', '"{\\"a\\":1}"'],
      ['number', '7'],
      ['true', 'true'],
    ] as const) {
      add('wrong-types', `${field} as ${label}`, jsonWithRaw(validCall({ [field]: '__RAW__' }), raw), {
        path: singlePath(),
        codes: ['invalid_event'],
      });
    }
  }
  for (const [label, raw] of [
    ['101 characters', JSON.stringify('m'.repeat(101))],
    ['5000 characters', JSON.stringify('m'.repeat(5000))],
    ['empty string', '""'],
    ['number', '12345'],
    ['object', '{"id":"m"}'],
    ['array', '["m"]'],
    ['true', 'true'],
  ] as const) {
    add('wrong-types', `messageId as ${label}`, jsonWithRaw(validCall({ messageId: '__RAW__' }), raw), {
      path: singlePath(),
      codes: ['invalid_event'],
    });
  }
  // Required fields missing or emptied (docs/spec.md §2: invalid_event naming the field).
  const noIds = { userId: null, anonymousId: null };
  add('wrong-types', 'track without event', JSON.stringify(validCall({ event: null })), {
    path: `/v1/${pick(['track', 't'])}`,
    codes: ['invalid_event'],
  });
  add('wrong-types', 'track with empty event', JSON.stringify(validCall({ event: '' })), {
    path: `/v1/${pick(['track', 't'])}`,
    codes: ['invalid_event'],
  });
  add('wrong-types', 'group without groupId', JSON.stringify(validCall({ groupId: null })), {
    path: `/v1/${pick(['group', 'g'])}`,
    codes: ['invalid_event'],
  });
  add('wrong-types', 'group with empty groupId', JSON.stringify(validCall({ groupId: '' })), {
    path: `/v1/${pick(['group', 'g'])}`,
    codes: ['invalid_event'],
  });
  add('wrong-types', 'alias without previousId', JSON.stringify(validCall({ previousId: null })), {
    path: `/v1/${pick(['alias', 'a'])}`,
    codes: ['invalid_event'],
  });
  add('wrong-types', 'alias without userId', JSON.stringify(validCall({ userId: null })), {
    path: `/v1/${pick(['alias', 'a'])}`,
    codes: ['invalid_event'],
  });
  for (const route of ['identify', 'track', 'page', 'screen', 'group', 'i', 'p', 's']) {
    add('wrong-types', `${route} without userId or anonymousId`, JSON.stringify(validCall(noIds)), {
      path: `/v1/${route}`,
      codes: ['invalid_event'],
    });
  }
  add('wrong-types', 'empty-string ids only', JSON.stringify(validCall({ userId: '', anonymousId: '' })), {
    path: '/v1/identify',
    codes: ['invalid_event'],
  });
  add('wrong-types', '{} on a single route', '{}', { path: singlePath(), codes: ['invalid_event'] });
  add(
    'wrong-types',
    '__proto__ carrying the ids',
    '{"__proto__":{"userId":"u","anonymousId":"a"},"event":"e","groupId":"g","previousId":"p"}',
    { path: pick(['/v1/track', '/v1/identify']), codes: ['invalid_event'] },
  );
  add('wrong-types', 'constructor/prototype keys without ids', '{"constructor":{"prototype":{"userId":"u"}},"event":"e"}', {
    path: '/v1/track',
    codes: ['invalid_event'],
  });

  // --- batch envelope of the wrong shape (invalid_request) and too many items --------------------
  for (const [label, raw] of [
    ['object', '{"0":{"type":"track","userId":"u","event":"e"}}'],
    ['empty object', '{}'],
    ['string', '"[{\\"type\\":\\"track\\"}]"'],
    ['number', '3'],
    ['true', 'true'],
    ['null', 'null'],
  ] as const) {
    add('batch-envelope', `batch as ${label}`, `{"batch":${raw},"context":{"a":1}}`, {
      path: batchPath(),
      auth: someAuth(),
      codes: ['invalid_request'],
    });
  }
  add('batch-envelope', 'no batch field', JSON.stringify(validCall()), { path: batchPath(), codes: ['invalid_request'] });
  add('batch-envelope', '{} on a batch route', '{}', { path: batchPath(), codes: ['invalid_request'] });
  add('batch-envelope', 'Batch (wrong case) instead of batch', '{"Batch":[{"type":"track","userId":"u","event":"e"}]}', {
    path: batchPath(),
    codes: ['invalid_request'],
  });
  add('batch-envelope', '2501 items', `{"batch":[${Array.from({ length: 2501 }, () => '0').join(',')}]}`, {
    path: batchPath(),
    codes: ['payload_too_large'],
  });
  add('batch-envelope', '10000 empty objects', `{"batch":[${Array.from({ length: 10000 }, () => '{}').join(',')}]}`, {
    path: batchPath(),
    codes: ['payload_too_large'],
  });

  // --- batch items of the wrong shape: docs/spec.md §2 says 200 with every dropped item in `rejected`
  const itemSets: [string, string[], ('invalid_event' | 'payload_too_large')[]][] = [
    ['strings', ['"a"', '""', '"{\\"type\\":\\"track\\"}"'], ['invalid_event', 'invalid_event', 'invalid_event']],
    ['nulls', ['null', 'null'], ['invalid_event', 'invalid_event']],
    [
      'numbers and booleans',
      ['0', '-1.5', '1e999', 'true', 'false'],
      ['invalid_event', 'invalid_event', 'invalid_event', 'invalid_event', 'invalid_event'],
    ],
    ['arrays', ['[]', '[{"type":"track","userId":"u","event":"e"}]'], ['invalid_event', 'invalid_event']],
    [
      'objects without or with unknown type',
      [
        '{"userId":"u","event":"e"}',
        '{"type":"purchase","userId":"u"}',
        '{"type":7,"userId":"u"}',
        '{"type":"TRACK","userId":"u","event":"e"}',
      ],
      ['invalid_event', 'invalid_event', 'invalid_event', 'invalid_event'],
    ],
    [
      'objects with wrong field types',
      [
        '{"type":"track","userId":{},"event":"e"}',
        '{"type":"track","userId":"u","event":5}',
        '{"type":"identify","userId":"u","traits":[]}',
        `{"type":"track","userId":"u","event":"e","messageId":"${'x'.repeat(101)}"}`,
      ],
      ['invalid_event', 'invalid_event', 'invalid_event', 'invalid_event'],
    ],
    [
      'objects missing required fields',
      ['{"type":"track","userId":"u"}', '{"type":"group","userId":"u"}', '{"type":"alias","userId":"u"}', '{"type":"identify"}'],
      ['invalid_event', 'invalid_event', 'invalid_event', 'invalid_event'],
    ],
    [
      'an item over 32 KB',
      [JSON.stringify({ type: 'track', userId: 'u', event: 'e', properties: { blob: 'z'.repeat(SINGLE_LIMIT) } })],
      ['payload_too_large'],
    ],
    [
      'a mix',
      [
        'null',
        JSON.stringify({ type: 'track', userId: 'u', event: 'e', properties: { blob: 'é'.repeat(SINGLE_LIMIT / 2) } }),
        '"x"',
        '{"type":"screen"}',
      ],
      ['invalid_event', 'payload_too_large', 'invalid_event', 'invalid_event'],
    ],
  ];
  for (const [label, items, codes] of itemSets) {
    add('batch-items', `batch of ${label}`, `{"batch":[${items.join(',')}],"writeKey":${JSON.stringify(writeKey)}}`, {
      path: batchPath(),
      auth: pick(['basic', 'none', 'bearer'] as const), // the body carries the key
      expect: { kind: 'batch-rejected', rejected: codes.map((code, index) => ({ index, code })) },
    });
  }

  // --- huge strings around the 32 KB and 500 KB limits ------------------------------------------
  /** `{"<field>":"xxx…",…}` padded to exactly `size` bytes (pad made of `unit`, 1 to 3 bytes). */
  function padded(size: number, template: (pad: string) => string, unit = 'x'): string {
    const base = Buffer.byteLength(template(''));
    const unitBytes = Buffer.byteLength(unit);
    const n = Math.floor((size - base) / unitBytes);
    let text = template(unit.repeat(n));
    text = text + ' '.repeat(size - Buffer.byteLength(text)); // JSON allows trailing whitespace
    if (Buffer.byteLength(text) !== size) throw new Error(`padding to ${size} failed`);
    return text;
  }
  const missingId = (pad: string) => JSON.stringify({ event: 'e', properties: { pad } }); // valid JSON, invalid call
  const badBatch = (pad: string) => JSON.stringify({ batch: pad }); // valid JSON, batch not an array
  for (const [size, unit] of [
    [SINGLE_LIMIT - 1, 'x'],
    [SINGLE_LIMIT, 'x'],
    [SINGLE_LIMIT, '€'],
  ] as const) {
    const path = singlePath();
    add('huge', `single call of ${size} bytes (at most the limit) missing ids, pad "${unit}"`, padded(size, missingId, unit), {
      path,
      codes: ['invalid_event'],
    });
  }
  for (const [size, unit] of [
    [SINGLE_LIMIT + 1, 'x'],
    [SINGLE_LIMIT + 1, '€'],
    [SINGLE_LIMIT + 100, '🍰'],
    [64 * 1024, 'x'],
    [BATCH_LIMIT + 1, 'x'],
    [2 * 1024 * 1024, 'x'],
  ] as const) {
    add(
      'huge',
      `single call of ${size} bytes, pad "${unit}"`,
      padded(size, (pad) => JSON.stringify(validCall({ properties: { pad } })), unit),
      { path: singlePath(), auth: someAuth(), codes: ['payload_too_large'] },
    );
  }
  add('huge', '11000 "€" (under 32 K characters, over 32 KB)', JSON.stringify(validCall({ properties: { pad: '€'.repeat(11_000) } })), {
    path: singlePath(),
    codes: ['payload_too_large'],
  });
  add('huge', 'huge userId (40 KB)', JSON.stringify(validCall({ userId: 'u'.repeat(40_000) })), {
    path: singlePath(),
    codes: ['payload_too_large'],
  });
  for (const size of [BATCH_LIMIT - 1, BATCH_LIMIT])
    add('huge', `batch envelope of ${size} bytes (at most the limit), batch a string`, padded(size, badBatch), {
      path: batchPath(),
      codes: ['invalid_request'],
    });
  for (const size of [BATCH_LIMIT + 1, BATCH_LIMIT + 4096, 1024 * 1024, 6 * 1024 * 1024]) {
    add(
      'huge',
      `batch of ${size} bytes`,
      padded(size, (pad) => JSON.stringify({ batch: [{ type: 'track', userId: 'u', event: 'e', properties: { pad } }] })),
      { path: batchPath(), auth: someAuth(), codes: ['payload_too_large'] },
    );
  }
  add('huge', 'batch of 2 MB as chunked, no Content-Length', padded(2 * 1024 * 1024, badBatch), {
    path: batchPath(),
    codes: ['payload_too_large'],
    chunked: true,
  });
  add('huge', 'single call of 1 MB as chunked, no Content-Length', padded(1024 * 1024, missingId), {
    path: singlePath(),
    codes: ['payload_too_large'],
    chunked: true,
  });

  // --- envelope context/integrations merged under many small items (each item is tiny as sent) -----
  {
    const items = (n: number, tag: string) =>
      Array.from({ length: n }, (_, i) => `{"type":"track","userId":"u","event":"e","messageId":"amp-${tag}-${i}"}`).join(',');
    /** An envelope of exactly 100 bytes under the batch limit, whatever the item count. */
    const envelope = (n: number, tag: string, field: (pad: string) => string) => {
      const head = `{"batch":[${items(n, tag)}],`;
      const padLength = BATCH_LIMIT - 100 - Buffer.byteLength(head + field('') + '}');
      return `${head}${field('x'.repeat(padLength))}}`;
    };
    const ctx = envelope(2000, 'ctx', (pad) => `"context":{"pad":"${pad}"}`);
    add('envelope-merge', `2000 items + an envelope context of ${ctx.length} B in all (100 B under 500 KB)`, ctx, {
      path: batchPath(),
      expect: { kind: 'batch-any-but-5xx' },
      chunked: false,
    });
    const integ = envelope(1600, 'int', (pad) => `"integrations":{"Webhooks":{"pad":"${pad}"}}`);
    add('envelope-merge', `1600 items + envelope integrations, ${integ.length} B in all (100 B under 500 KB)`, integ, {
      path: batchPath(),
      expect: { kind: 'batch-any-but-5xx' },
      chunked: false,
    });
  }

  // --- deep nesting --------------------------------------------------------------------------
  for (const depth of [65, 100, 300, 1000, 5000, 20_000, 30_000, 60_000, 200_000, 400_000, 600_000]) {
    const path = depth > 30_000 ? batchPath() : anyPath();
    const text = rnd() < 0.5 ? '['.repeat(depth) + ']'.repeat(depth) : '['.repeat(depth);
    add('deep-nesting', `${depth} x [`, text, { path, codes: bySize(path, text.length, ['invalid_request']) });
  }
  for (const depth of [65, 500, 2000, 6000, 50_000, 100_000]) {
    const path = depth > 6000 ? batchPath() : anyPath();
    const text = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    add('deep-nesting', `${depth} x {"a":`, text, { path, codes: bySize(path, text.length, ['invalid_request']) });
  }
  for (const depth of [70, 1000, 5000]) {
    const text = `{"userId":"u","event":"e","properties":${'{"k":['.repeat(depth)}0${']}'.repeat(depth)}}`;
    const path = singlePath();
    add('deep-nesting', `valid call with properties ${2 * depth} levels deep`, text, {
      path,
      codes: bySize(path, text.length, ['invalid_request']),
    });
  }
  {
    const depth = 2000;
    const text = `{"batch":[{"type":"track","userId":"u","event":"e","properties":${'['.repeat(depth)}${']'.repeat(depth)}}]}`;
    add('deep-nesting', 'batch item 2000 levels deep', text, { path: batchPath(), codes: ['invalid_request'] });
  }
  // 64 levels is at the depth limit of docs/spec.md §2, where counting conventions differ, so either answer is fine.
  add('deep-nesting', '64 levels, call missing ids', `${'{"a":'.repeat(63)}{"event":"e"}${'}'.repeat(63)}`, {
    path: singlePath(),
    codes: ['invalid_event', 'invalid_request'],
  });
  // Brackets inside strings are not nesting; the body must still fail for its real defect.
  add(
    'deep-nesting',
    '100000 [ inside a string, call missing ids',
    JSON.stringify({ event: 'e', properties: { s: '['.repeat(100_000) } }),
    { path: batchPath(), codes: ['invalid_request'] },
  );

  // --- invalid UTF-8 -------------------------------------------------------------------------
  const badSequences: [string, number[]][] = [
    ['lone 0xff', [0xff]],
    ['lone 0xfe', [0xfe]],
    ['lone continuation 0x80', [0x80]],
    ['overlong NUL c0 80', [0xc0, 0x80]],
    ['overlong c1 bf', [0xc1, 0xbf]],
    ['overlong e0 80 af', [0xe0, 0x80, 0xaf]],
    ['UTF-16 surrogate ed a0 80', [0xed, 0xa0, 0x80]],
    ['CESU-8 surrogate pair', [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]],
    ['above U+10FFFF f4 90 80 80', [0xf4, 0x90, 0x80, 0x80]],
    ['5-byte form f8 88 80 80 80', [0xf8, 0x88, 0x80, 0x80, 0x80]],
    ['truncated 2-byte c3', [0xc3]],
    ['truncated 3-byte e2 82', [0xe2, 0x82]],
    ['truncated 4-byte f0 9f 98', [0xf0, 0x9f, 0x98]],
    ['latin-1 é e9', [0xe9]],
  ];
  for (const [label, seq] of badSequences) {
    // Inside a string value of an otherwise valid call: a lenient decoder would accept it.
    const where = pick(['userId', 'event', 'properties.note', 'a key']);
    const marker = '@@BAD@@';
    const call = validCall();
    if (where === 'userId') call['userId'] = `u${marker}`;
    else if (where === 'event') call['event'] = `Order${marker}Completed`;
    else if (where === 'properties.note') call['properties'] = { note: `x${marker}y` };
    else call['properties'] = { [`k${marker}`]: 1 };
    const [before, after] = JSON.stringify(call).split(marker) as [string, string];
    const path = singlePath();
    add('invalid-utf8', `${label} in ${where}`, Buffer.concat([Buffer.from(before), Buffer.from(seq), Buffer.from(after)]), {
      path,
      auth: someAuth(),
      codes: ['invalid_request'],
    });
    // At the very end of a batch body, after the closing brace.
    const batch = Buffer.from(JSON.stringify({ batch: [{ type: 'track', ...validCall() }] }));
    add('invalid-utf8', `${label} at the end of a batch`, Buffer.concat([batch, Buffer.from(seq)]), {
      path: batchPath(),
      codes: ['invalid_request'],
    });
  }
  add('invalid-utf8', 'whole body latin-1', Buffer.from(JSON.stringify(validCall({ event: 'Réservé à l’été' })), 'latin1'), {
    path: singlePath(),
    codes: ['invalid_request'],
  });
  add(
    'invalid-utf8',
    'UTF-16LE with BOM',
    Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(JSON.stringify(validCall()), 'utf16le')]),
    { path: singlePath(), headers: { 'content-type': 'application/json; charset=utf-16' }, codes: ['invalid_request'] },
  );
  add(
    'invalid-utf8',
    'UTF-16BE with BOM',
    Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(JSON.stringify(validCall()), 'utf16le').swap16()]),
    { path: singlePath(), codes: ['invalid_request'] },
  );
  add(
    'invalid-utf8',
    'invalid UTF-8 inside a batch item',
    Buffer.concat([Buffer.from('{"batch":[{"type":"track","userId":"u'), Buffer.from([0xff, 0xfe]), Buffer.from('","event":"e"}]}')]),
    { path: batchPath(), codes: ['invalid_request'] },
  );
  add(
    'invalid-utf8',
    'gzip-wrapped invalid UTF-8',
    zlib.gzipSync(Buffer.concat([Buffer.from('{"userId":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('","event":"e"}')])),
    { path: singlePath(), headers: { 'content-encoding': 'gzip' }, codes: ['invalid_request'] },
  );
  add('invalid-utf8', '1000 random high bytes', Buffer.from(Array.from({ length: 1000 }, () => int(0x80, 0xff))), {
    path: anyPath(),
    codes: ['invalid_request'],
  });

  // --- content encodings ------------------------------------------------------------------------
  const goodSingle = Buffer.from(JSON.stringify(validCall()));
  const goodBatch = Buffer.from(JSON.stringify({ batch: [{ type: 'track', ...validCall() }] }));
  const gzSingle = zlib.gzipSync(goodSingle);
  const enc = (encoding: string) => ({ 'content-encoding': encoding });
  add('content-encoding', 'gzip header, plain JSON bytes', goodSingle, {
    path: singlePath(),
    headers: enc('gzip'),
    codes: ['invalid_request'],
  });
  add('content-encoding', 'x-gzip header, plain JSON bytes', goodBatch, {
    path: batchPath(),
    headers: enc('x-gzip'),
    codes: ['invalid_request'],
  });
  add('content-encoding', 'gzip header, random bytes', bytes(300), {
    path: anyPath(),
    headers: enc('gzip'),
    auth: someAuth(),
    codes: ['invalid_request'],
  });
  add('content-encoding', 'gzip header, gzip magic then garbage', Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), bytes(200)]), {
    path: anyPath(),
    headers: enc('gzip'),
    codes: ['invalid_request'],
  });
  add('content-encoding', 'gzip header, empty body', Buffer.alloc(0), {
    path: anyPath(),
    headers: enc('gzip'),
    codes: ['invalid_request'],
  });
  add('content-encoding', 'deflate header, plain JSON bytes', goodSingle, {
    path: singlePath(),
    headers: enc('deflate'),
    codes: ['invalid_request'],
  });
  for (let i = 0; i < 3; i++)
    add('content-encoding', `deflate header, random bytes #${i}`, bytes(int(10, 400)), {
      path: anyPath(),
      headers: enc('deflate'),
      auth: someAuth(),
      codes: ['invalid_request'],
    });
  add('content-encoding', 'deflate header, zlib magic then garbage', Buffer.concat([Buffer.from([0x78, 0x9c]), bytes(100)]), {
    path: anyPath(),
    headers: enc('deflate'),
    codes: ['invalid_request'],
  });
  add('content-encoding', 'br header, random bytes', bytes(200), { path: anyPath(), headers: enc('br'), codes: ['invalid_request'] });
  for (let cut = 0; cut < gzSingle.length; cut += int(20, 60)) {
    add('content-encoding', `gzip stream truncated at ${cut}/${gzSingle.length}`, gzSingle.subarray(0, cut), {
      path: singlePath(),
      headers: enc('gzip'),
      codes: ['invalid_request'],
    });
  }
  const zSingle = zlib.deflateSync(goodSingle);
  add('content-encoding', 'zlib stream truncated to half', zSingle.subarray(0, zSingle.length >> 1), {
    path: singlePath(),
    headers: enc('deflate'),
    codes: ['invalid_request'],
  });
  {
    const corrupt = Buffer.from(gzSingle);
    corrupt[corrupt.length - 6] = (corrupt[corrupt.length - 6] ?? 0) ^ 0xff; // CRC32 trailer
    add('content-encoding', 'gzip with a corrupted CRC', corrupt, { path: singlePath(), headers: enc('gzip'), codes: ['invalid_request'] });
  }
  add('content-encoding', 'gzip inside gzip, declared once', zlib.gzipSync(gzSingle), {
    path: singlePath(),
    headers: enc('gzip'),
    codes: ['invalid_request'],
  });
  add('content-encoding', 'gzip body declared as deflate', gzSingle, {
    path: singlePath(),
    headers: enc('deflate'),
    codes: ['invalid_request'],
  });
  for (const encoding of [
    'zstd',
    'compress',
    'x-compress',
    'gzip, deflate',
    'gzip, gzip',
    'identity, gzip',
    '*',
    'utf-8',
    'base64',
    'chunked',
    'gzip;q=1',
  ]) {
    add('content-encoding', `unknown encoding "${encoding}"`, encoding.includes('gzip') ? gzSingle : goodSingle, {
      path: anyPath(),
      headers: enc(encoding),
      auth: someAuth(),
      codes: ['invalid_request'],
    });
  }
  // Bombs: a few KB on the wire, many MB inflated. The limits apply to the inflated size.
  const spaces = Buffer.alloc(20 * 1024 * 1024, 0x20);
  const gzBomb = zlib.gzipSync(spaces, { level: 9 });
  const zBomb = zlib.deflateSync(spaces, { level: 9 });
  const rawBomb = zlib.deflateRawSync(spaces, { level: 9 });
  const brBomb = zlib.brotliCompressSync(spaces, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } });
  const jsonBomb = zlib.gzipSync(
    Buffer.concat([
      Buffer.from('{"batch":[{"type":"track","userId":"u","event":"e","properties":{"pad":"'),
      Buffer.alloc(8 * 1024 * 1024, 0x61),
      Buffer.from('"}}]}'),
    ]),
    { level: 9 },
  );
  add('content-encoding', `gzip bomb ${gzBomb.length} B -> 20 MB, batch route`, gzBomb, {
    path: batchPath(),
    headers: enc('gzip'),
    codes: ['payload_too_large'],
  });
  add('content-encoding', `gzip bomb ${gzBomb.length} B -> 20 MB, single route`, gzBomb, {
    path: singlePath(),
    headers: enc('gzip'),
    codes: ['payload_too_large'],
  });
  add('content-encoding', `gzip bomb of JSON ${jsonBomb.length} B -> 8 MB, batch route`, jsonBomb, {
    path: batchPath(),
    headers: enc('gzip'),
    codes: ['payload_too_large'],
  });
  add('content-encoding', `x-gzip bomb, chunked`, gzBomb, {
    path: batchPath(),
    headers: enc('x-gzip'),
    codes: ['payload_too_large'],
    chunked: true,
  });
  add('content-encoding', `deflate (zlib) bomb ${zBomb.length} B -> 20 MB, batch route`, zBomb, {
    path: batchPath(),
    headers: enc('deflate'),
    codes: ['payload_too_large'],
  });
  add('content-encoding', `deflate (zlib) bomb ${zBomb.length} B -> 20 MB, single route`, zBomb, {
    path: singlePath(),
    headers: enc('deflate'),
    codes: ['payload_too_large'],
  });
  add('content-encoding', `raw deflate bomb ${rawBomb.length} B -> 20 MB`, rawBomb, {
    path: batchPath(),
    headers: enc('deflate'),
    codes: ['payload_too_large'],
  });
  add('content-encoding', `br bomb ${brBomb.length} B -> 20 MB`, brBomb, {
    path: batchPath(),
    headers: enc('br'),
    codes: ['payload_too_large'],
  });
  {
    const over = Buffer.from(padded(SINGLE_LIMIT + 1, (pad) => JSON.stringify(validCall({ properties: { pad } }))));
    add('content-encoding', 'gzip of a 32 KB + 1 single call', zlib.gzipSync(over), {
      path: singlePath(),
      headers: enc('gzip'),
      codes: ['payload_too_large'],
    });
    add('content-encoding', 'deflate of a 32 KB + 1 single call', zlib.deflateSync(over), {
      path: singlePath(),
      headers: enc('deflate'),
      codes: ['payload_too_large'],
    });
    const over40k = Buffer.from(JSON.stringify(validCall({ properties: { pad: 'p'.repeat(40_000) } })));
    add('content-encoding', 'deflate (zlib) of a 40 KB single call', zlib.deflateSync(over40k), {
      path: singlePath(),
      headers: enc('deflate'),
      codes: ['payload_too_large'],
    });
    add('content-encoding', 'raw deflate of a 40 KB single call', zlib.deflateRawSync(over40k), {
      path: singlePath(),
      headers: enc('deflate'),
      codes: ['payload_too_large'],
    });
    const over600k = Buffer.from(padded(600 * 1024, badBatch));
    add('content-encoding', 'deflate (zlib) of a 600 KB batch', zlib.deflateSync(over600k), {
      path: batchPath(),
      headers: enc('deflate'),
      codes: ['payload_too_large'],
    });
    const under = Buffer.from(padded(SINGLE_LIMIT, missingId));
    add('content-encoding', 'gzip of a 32 KB call missing ids (limit is on inflated size, not over it)', zlib.gzipSync(under), {
      path: singlePath(),
      headers: enc('gzip'),
      codes: ['invalid_event'],
    });
  }

  // --- NUL bytes ---------------------------------------------------------------------------------
  const nul = '\u0000';
  add('nul-bytes', 'NUL inside userId', `{"userId":"u${nul}","event":"e","anonymousId":"a","groupId":"g","previousId":"p"}`, {
    path: singlePath(),
    codes: ['invalid_request'],
  });
  add('nul-bytes', 'NUL inside a key', `{"user${nul}Id":"u","event":"e"}`, { path: singlePath(), codes: ['invalid_request'] });
  add('nul-bytes', 'NUL before the body', `${nul}${JSON.stringify(validCall())}`, {
    path: singlePath(),
    auth: someAuth(),
    codes: ['invalid_request'],
  });
  add('nul-bytes', 'NUL after the body', `${JSON.stringify(validCall())}${nul}`, { path: singlePath(), codes: ['invalid_request'] });
  add('nul-bytes', 'NUL between tokens', JSON.stringify(validCall()).replace(',', `,${nul}`), {
    path: singlePath(),
    codes: ['invalid_request'],
  });
  add('nul-bytes', 'NUL after a batch', `${JSON.stringify({ batch: [{ type: 'track', ...validCall() }] })}${nul}${nul}`, {
    path: batchPath(),
    codes: ['invalid_request'],
  });
  add('nul-bytes', 'NUL inside a batch item string', `{"batch":[{"type":"track${nul}","userId":"u","event":"e"}]}`, {
    path: batchPath(),
    codes: ['invalid_request'],
  });
  add('nul-bytes', '1 NUL', nul, { path: anyPath(), auth: someAuth(), codes: ['invalid_request'] });
  add('nul-bytes', '4096 NULs', Buffer.alloc(4096, 0), { path: anyPath(), auth: someAuth(), codes: ['invalid_request'] });
  add('nul-bytes', '40000 NULs on a single route', Buffer.alloc(40_000, 0), { path: singlePath(), codes: ['payload_too_large'] });
  add('nul-bytes', 'gzip of 4096 NULs', zlib.gzipSync(Buffer.alloc(4096, 0)), {
    path: anyPath(),
    headers: enc('gzip'),
    codes: ['invalid_request'],
  });
  add('nul-bytes', 'NUL-separated JSON objects', `${JSON.stringify(validCall())}${nul}${JSON.stringify(validCall())}`, {
    path: singlePath(),
    codes: ['invalid_request'],
  });

  // --- empty bodies ------------------------------------------------------------------------------
  for (const route of [...SINGLE_ROUTES, ...BATCH_ROUTES])
    add('empty-body', `empty body on /v1/${route}`, Buffer.alloc(0), {
      path: `/v1/${route}${slash()}`,
      auth: someAuth(),
      codes: ['invalid_request'],
    });
  add('empty-body', 'empty body, chunked', Buffer.alloc(0), { path: anyPath(), chunked: true, codes: ['invalid_request'] });
  add('empty-body', 'whitespace only', ' \t\r\n  ', { path: anyPath(), codes: ['invalid_request'] });
  add('empty-body', 'UTF-8 BOM only', Buffer.from([0xef, 0xbb, 0xbf]), { path: anyPath(), codes: ['invalid_request'] });
  add('empty-body', 'empty body without write key', Buffer.alloc(0), { path: anyPath(), auth: 'none', codes: ['invalid_request'] });

  // --- JSON that is not an object at top level ---------------------------------------------------
  for (const text of [
    '[]',
    `[${JSON.stringify(validCall())}]`,
    `[{"batch":[]}]`,
    '0',
    '42',
    '-0',
    '1e999',
    '"track"',
    JSON.stringify(JSON.stringify(validCall())),
    'null',
    'true',
    'false',
  ]) {
    add('top-level', `top-level ${text.slice(0, 24)}`, text, { path: anyPath(), auth: someAuth(), codes: ['invalid_request'] });
    if (text === '[]' || text === 'null' || text === '"track"')
      add('top-level', `top-level ${text} (again)`, text, { path: anyPath(), codes: ['invalid_request'] });
  }
  add('top-level', 'two objects back to back', `${JSON.stringify(validCall())}${JSON.stringify(validCall())}`, {
    path: singlePath(),
    codes: ['invalid_request'],
  });
  add(
    'top-level',
    'NDJSON batch',
    `${JSON.stringify({ type: 'track', ...validCall() })}\n${JSON.stringify({ type: 'track', ...validCall() })}\n`,
    { path: batchPath(), codes: ['invalid_request'] },
  );
  add('top-level', 'JSONP-style', `callback(${JSON.stringify(validCall())})`, { path: singlePath(), codes: ['invalid_request'] });
  add('top-level', 'JSON5 (single quotes, trailing comma)', "{'userId':'u','event':'e',}", {
    path: singlePath(),
    codes: ['invalid_request'],
  });
  add('top-level', 'JS comments', `/* hi */${JSON.stringify(validCall())}`, { path: singlePath(), codes: ['invalid_request'] });

  // --- odd content types (docs/spec.md §2: JSON whatever the Content-Type says) -------------------
  const oddTypes = [
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=xyz',
    'application/xml',
    'application/octet-stream',
    'image/png',
    ';;;',
    'application/json; charset=iso-8859-1',
    'text/html',
  ];
  for (const ct of oddTypes) {
    add('content-type', `${ct}: JSON call missing ids (parsed as JSON anyway)`, JSON.stringify(validCall(noIds)), {
      path: singlePath(),
      headers: { 'content-type': ct },
      codes: ['invalid_event'],
    });
  }
  add('content-type', 'form-urlencoded fields', 'userId=u&event=Signed+Up&properties%5Bplan%5D=pro', {
    path: singlePath(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    codes: ['invalid_request'],
  });
  add('content-type', 'form-urlencoded data=<json>', `data=${encodeURIComponent(JSON.stringify(validCall()))}`, {
    path: singlePath(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    codes: ['invalid_request'],
  });
  add(
    'content-type',
    'multipart with a JSON part',
    `--xyz\r\nContent-Disposition: form-data; name="data"\r\n\r\n${JSON.stringify(validCall())}\r\n--xyz--\r\n`,
    { path: singlePath(), headers: { 'content-type': 'multipart/form-data; boundary=xyz' }, codes: ['invalid_request'] },
  );
  add('content-type', 'XML', '<?xml version="1.0"?><track><userId>u</userId><event>e</event></track>', {
    path: singlePath(),
    headers: { 'content-type': 'application/xml' },
    codes: ['invalid_request'],
  });
  add('content-type', 'PNG bytes', Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), bytes(120)]), {
    path: anyPath(),
    headers: { 'content-type': 'image/png' },
    codes: ['invalid_request'],
  });
  add('content-type', 'batch envelope missing batch, text/plain', '{"writeKey":"x"}', {
    path: batchPath(),
    headers: { 'content-type': 'text/plain' },
    codes: ['invalid_request', 'unknown_write_key'],
  });

  // --- write key: missing, unknown, wrong type (body is otherwise a valid call) -------------------
  const good = JSON.stringify(validCall());
  const basicOf = (user: string | Buffer) => ({ authorization: `Basic ${Buffer.from(user).toString('base64')}` });
  add('write-key', 'no Authorization, no writeKey', good, { path: singlePath(), auth: 'none', codes: ['missing_write_key'] });
  add('write-key', 'no key on a batch', JSON.stringify({ batch: [{ type: 'track', ...validCall() }] }), {
    path: batchPath(),
    auth: 'none',
    codes: ['missing_write_key'],
  });
  add('write-key', 'Bearer only (key never comes from Bearer)', good, { path: singlePath(), auth: 'bearer', codes: ['missing_write_key'] });
  add('write-key', 'Basic with empty user name', good, {
    path: singlePath(),
    auth: 'none',
    headers: basicOf(':secret'),
    codes: ['missing_write_key'],
  });
  add('write-key', 'Basic with invalid base64 characters', good, {
    path: singlePath(),
    auth: 'none',
    headers: { authorization: 'Basic !!!not-base64!!!' },
    codes: ['missing_write_key'],
  });
  add('write-key', 'Basic without credentials', good, {
    path: singlePath(),
    auth: 'none',
    headers: { authorization: 'Basic' },
    codes: ['missing_write_key'],
  });
  add('write-key', 'Digest scheme', good, {
    path: singlePath(),
    auth: 'none',
    headers: { authorization: 'Digest username="x"' },
    codes: ['missing_write_key'],
  });
  for (const [label, raw] of [
    ['number', '12345'],
    ['object', `{"key":${JSON.stringify(writeKey)}}`],
    ['array', `[${JSON.stringify(writeKey)}]`],
    ['empty string', '""'],
    ['null', 'null'],
    ['true', 'true'],
  ] as const) {
    add('write-key', `writeKey in body as ${label}`, jsonWithRaw(validCall({ writeKey: '__RAW__' }), raw), {
      path: singlePath(),
      auth: 'none',
      codes: ['missing_write_key'],
    });
  }
  add('write-key', 'unknown Basic key', good, { path: singlePath(), auth: 'unknown', codes: ['unknown_write_key'] });
  add('write-key', 'unknown Basic key wins over a valid body key', JSON.stringify(validCall({ writeKey })), {
    path: singlePath(),
    auth: 'unknown',
    codes: ['unknown_write_key'],
  });
  add('write-key', 'unknown body key', JSON.stringify(validCall({ writeKey: 'wk_nope' })), {
    path: singlePath(),
    auth: 'none',
    codes: ['unknown_write_key'],
  });
  add('write-key', 'Basic user name of invalid UTF-8 bytes', good, {
    path: singlePath(),
    auth: 'none',
    headers: basicOf(Buffer.from([0xff, 0xfe, 0xc0, 0x3a])),
    codes: ['unknown_write_key'],
  });
  add('write-key', 'Basic with a 6 KB user name', good, {
    path: singlePath(),
    auth: 'none',
    headers: basicOf(`${'k'.repeat(6000)}:`),
    codes: ['unknown_write_key'],
  });
  add('write-key', 'key with the write key plus a suffix', good, {
    path: singlePath(),
    auth: 'none',
    headers: basicOf(`${writeKey}x:`),
    codes: ['unknown_write_key'],
  });

  // --- every route, other methods, unknown paths -------------------------------------------------
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
    add('routes-methods', `${method} on an intake route`, method === 'GET' || method === 'DELETE' ? Buffer.alloc(0) : good, {
      method,
      path: anyPath(),
      codes: ['method_not_allowed'],
    });
  }
  for (const path of [
    '/v1/trak',
    '/v1/x',
    '/v1/batches',
    '/v1/track/extra',
    '/v1//track',
    '/v1/TRACK',
    '/v1/',
    '/v2/track',
    '/v1',
    '/track',
    '/v1/%ff',
    '/v1/track%00',
  ]) {
    add('routes-methods', `POST ${path}`, good, { path, codes: ['not_found'] });
  }

  return cases;
}

// ---------------------------------------------------------------------------------------------
// Sending
// ---------------------------------------------------------------------------------------------

type Answer =
  { ok: true; status: number; headers: http.IncomingHttpHeaders; text: string; ms: number } | { ok: false; error: string; ms: number };

const REQUEST_TIMEOUT_MS = 10_000;

/** One request on a fresh connection, the body as raw bytes. Never rejects: failures are answers. */
function send(baseUrl: string, c: Case): Promise<Answer> {
  const started = Date.now();
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    let settled = false;
    const settle = (a: Answer) => {
      if (!settled) {
        settled = true;
        resolve(a);
      }
    };
    const headers: Record<string, string> = { ...c.headers };
    if (!c.chunked && c.method !== 'GET') headers['content-length'] = String(c.body.length);
    const req = http.request({ host: url.hostname, port: url.port, method: c.method, path: c.path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        settle({
          ok: true,
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
          ms: Date.now() - started,
        }),
      );
      res.on('error', (err) => settle({ ok: false, error: `response aborted: ${err.message}`, ms: Date.now() - started }));
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => {
      settle({ ok: false, error: `no answer within ${REQUEST_TIMEOUT_MS} ms`, ms: Date.now() - started });
      req.destroy();
    });
    // An error after the response arrived (the server may close before reading an oversized body) is fine.
    req.on('error', (err: NodeJS.ErrnoException) =>
      settle({ ok: false, error: `connection failed before an answer: ${err.code ?? err.message}`, ms: Date.now() - started }),
    );
    if (c.chunked && c.body.length > 0) {
      const third = Math.ceil(c.body.length / 3);
      req.write(c.body.subarray(0, third));
      req.write(c.body.subarray(third, 2 * third));
      req.end(c.body.subarray(2 * third));
    } else if (c.method === 'GET' && c.body.length === 0) req.end();
    else req.end(c.body);
  });
}

async function runAll(baseUrl: string, cases: readonly Case[], concurrency: number): Promise<Answer[]> {
  const answers: Answer[] = new Array<Answer>(cases.length);
  let next = 0;
  async function worker() {
    for (let i = next++; i < cases.length; i = next++) answers[i] = await send(baseUrl, cases[i] as Case);
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return answers;
}

// ---------------------------------------------------------------------------------------------
// Judging
// ---------------------------------------------------------------------------------------------

function preview(c: Case): string {
  const head = c.body.subarray(0, 48);
  const printable = /^[\x20-\x7e]*$/.test(head.toString('latin1'));
  const shown = printable ? JSON.stringify(head.toString('latin1')) : `hex ${head.toString('hex')}`;
  return `${c.body.length} B ${shown}${c.body.length > 48 ? '…' : ''}`;
}

/** Every way the answer differs from what it must be; empty when it is right. */
function problemsOf(c: Case, a: Answer): string[] {
  if (!a.ok) return [a.error];
  const problems: string[] = [];
  let json: unknown;
  try {
    json = JSON.parse(a.text);
  } catch {
    return [`status ${a.status}, body is not JSON: ${JSON.stringify(a.text.slice(0, 120))}`];
  }
  const body = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const contentType = String(a.headers['content-type'] ?? '');
  if (!contentType.startsWith('application/json')) problems.push(`content-type ${JSON.stringify(contentType)}`);
  const shown = `${a.status} ${a.text.slice(0, 200)}`;

  if (c.expect.kind === 'batch-rejected') {
    if (a.status !== 200 || body['success'] !== true) problems.push(`expected 200 {success:true, rejected}, got ${shown}`);
    const rejected = Array.isArray(body['rejected']) ? (body['rejected'] as Record<string, unknown>[]) : [];
    const got = rejected.map((r) => ({ index: r['index'], code: r['code'] }));
    if (JSON.stringify(got) !== JSON.stringify(c.expect.rejected))
      problems.push(`rejected ${JSON.stringify(got)}, expected ${JSON.stringify(c.expect.rejected)}`);
    if (!rejected.every((r) => typeof r['message'] === 'string' && r['message'] !== '')) problems.push('a rejected item has no message');
    return problems;
  }

  if (c.expect.kind === 'batch-any-but-5xx') {
    const rejected = Array.isArray(body['rejected']) ? (body['rejected'] as Record<string, unknown>[]) : [];
    const fine =
      (a.status === 200 && body['success'] === true && rejected.every((r) => r['code'] === 'payload_too_large')) ||
      (a.status === 400 && body['success'] === false && body['code'] === 'payload_too_large');
    if (!fine) problems.push(`expected 200 (items accepted or rejected as payload_too_large) or 400 payload_too_large, got ${shown}`);
    return problems;
  }

  if (a.status >= 500) problems.push(`5xx: ${shown}`);
  else if (a.status >= 300 && a.status < 400) problems.push(`3xx: ${shown}`);
  else if (a.status < 400) problems.push(`not an error: ${shown}`);
  if (body['success'] !== false) problems.push(`success is ${JSON.stringify(body['success'])}, not false`);
  const code = body['code'];
  if (typeof code !== 'string' || !(code in errorCodes)) {
    problems.push(`code ${JSON.stringify(code)} is not a registered error code`);
    return problems;
  }
  if (typeof body['message'] !== 'string' || body['message'] === '') problems.push('no message');
  const registered = errorCodes[code as ErrorCode].httpStatus;
  if (registered !== a.status) problems.push(`code ${code} is registered as ${String(registered)}, answered ${a.status}`);
  if (!c.expect.codes.includes(code as ErrorCode)) problems.push(`code ${code}, expected ${c.expect.codes.join(' or ')} (${shown})`);
  return problems;
}

function describeFailure(c: Case, a: Answer, problems: string[]): string {
  const headers = Object.entries(c.headers)
    .filter(([k]) => k !== 'authorization' || !c.headers[k]?.startsWith('Basic '))
    .map(([k, v]) => `${k}: ${v.length > 60 ? `${v.slice(0, 60)}…` : v}`);
  return `[${c.name}] ${c.method} ${c.path}${c.chunked ? ' (chunked)' : ''} {${headers.join('; ')}} body ${preview(c)} -> ${problems.join('; ')} (${a.ms} ms)`;
}

// ---------------------------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------------------------

describe('intake under malformed requests', () => {
  let t: TestIngest;
  let cases: Case[] = [];
  let answers: Answer[] = [];
  /** messageIds on the route queue after the run, except the envelope-merge items the test lets ingest accept. */
  let queuedAfterRun: string[] = ['not run'];
  let runMs = 0;

  beforeAll(async () => {
    t = await startTestIngest({ label: 'malformed' });
    cases = generateCases(t.writeKey);
    const started = Date.now();
    answers = await runAll(t.url, cases, 10);
    runMs = Date.now() - started;
    queuedAfterRun = (await t.routeJobs()).flatMap((j) => j.calls.map((call) => call.messageId)).filter((id) => !id.startsWith('amp-'));
  }, 60_000);
  afterAll(() => t?.close());

  const failuresIn = (category: Category) =>
    cases.flatMap((c, i) => {
      if (c.category !== category) return [];
      const a = answers[i] as Answer;
      const problems = problemsOf(c, a);
      return problems.length > 0 ? [describeFailure(c, a, problems)] : [];
    });

  it('generates the same few hundred cases on every run, on every intake route', () => {
    const counts = Object.fromEntries(CATEGORIES.map((cat) => [cat, cases.filter((c) => c.category === cat).length]));
    expect(counts).toEqual({
      'truncated-json': 111,
      'wrong-types': 86,
      'batch-envelope': 11,
      'batch-items': 9,
      huge: 19,
      'envelope-merge': 2,
      'deep-nesting': 23,
      'invalid-utf8': 34,
      'content-encoding': 49,
      'nul-bytes': 12,
      'empty-body': 19,
      'top-level': 20,
      'content-type': 14,
      'write-key': 19,
      'routes-methods': 16,
    });
    expect(cases.length).toBe(444);
    expect(answers.filter(Boolean)).toHaveLength(cases.length);
    const paths = new Set(cases.map((c) => c.path.replace(/\/$/, '')));
    for (const route of [...SINGLE_ROUTES, ...BATCH_ROUTES]) expect(paths).toContain(`/v1/${route}`);
    expect(cases.some((c) => c.path.endsWith('/') && c.path !== '/v1/')).toBe(true);
    expect(cases.some((c) => c.chunked)).toBe(true);
    expect(cases.some((c) => c.headers['authorization'] === undefined)).toBe(true);
  });

  it.each(CATEGORIES)('%s: every answer is the JSON error docs/spec.md §2 names (4xx, registered code)', (category) => {
    expect(failuresIn(category)).toEqual([]);
  });

  it('took no malformed call onto the route queue, and the whole run was quick', () => {
    expect(queuedAfterRun).toEqual([]);
    expect(runMs).toBeLessThan(25_000);
  });

  it('still serves afterwards: a valid track is accepted and enqueued, /healthz answers 200', async () => {
    const res = await post(
      t.url,
      '/v1/track',
      { userId: 'after-the-storm', event: 'Still Alive', messageId: 'malformed-final-1' },
      { writeKey: t.writeKey },
    );
    expect(res).toMatchObject({ status: 200, json: { success: true } });
    const calls = (await t.routeJobs()).flatMap((j) => j.calls).filter((call) => !call.messageId.startsWith('amp-'));
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ type: 'track', userId: 'after-the-storm', event: 'Still Alive', messageId: 'malformed-final-1' });
    const health = await fetch(`${t.url}/healthz`);
    expect(health.status).toBe(200);
  });
});
