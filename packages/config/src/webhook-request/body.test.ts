import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { signBody, type DeleteNotice, type NormalizedCall } from '../index.js';
import { buildBody } from './body.js';
import { USER_AGENT, buildHeaders } from './headers.js';

const FIXTURES = path.join(__dirname, '../../fixtures/webhooks');

interface CallFixture {
  readonly name: string;
  readonly sharedSecret: string;
  readonly call: NormalizedCall | DeleteNotice;
  readonly signature: string;
}

const files = readdirSync(FIXTURES);
const cases = files
  .filter((f) => f.endsWith('.call.json'))
  .sort()
  .map((f) => {
    const base = f.slice(0, -'.call.json'.length);
    const fixture = JSON.parse(readFileSync(path.join(FIXTURES, f), 'utf8')) as CallFixture;
    return { base, fixture, body: readFileSync(path.join(FIXTURES, `${base}.body.json`), 'utf8') };
  });

describe('golden webhook fixtures (packages/config/fixtures/webhooks)', () => {
  it('come in complete pairs, one for every call type and delete', () => {
    const calls = files.filter((f) => f.endsWith('.call.json')).map((f) => f.slice(0, -'.call.json'.length));
    const bodies = files.filter((f) => f.endsWith('.body.json')).map((f) => f.slice(0, -'.body.json'.length));
    expect(bodies.sort()).toEqual(calls.sort());
    expect(new Set(cases.map((c) => c.fixture.call.type))).toEqual(
      new Set(['identify', 'track', 'page', 'screen', 'group', 'alias', 'delete']),
    );
  });

  describe.each(cases)('$base', ({ fixture, body }) => {
    it('buildBody gives the .body.json text exactly', () => {
      expect(buildBody(fixture.call)).toBe(body);
    });

    it('signBody(sharedSecret, body) is the fixture signature', () => {
      expect(signBody(fixture.sharedSecret, body)).toBe(fixture.signature);
      expect(signBody(fixture.sharedSecret, buildBody(fixture.call))).toBe(fixture.signature);
    });

    it('the body is a JSON object without messageId, integrations or receivedAt', () => {
      const parsed = JSON.parse(body) as Record<string, unknown>;
      expect(parsed).not.toHaveProperty('messageId');
      expect(parsed).not.toHaveProperty('integrations');
      expect(parsed).not.toHaveProperty('receivedAt');
      expect(parsed['version']).toBe(fixture.call.type === 'delete' ? undefined : 1);
    });
  });
});

describe('buildBody', () => {
  const track: NormalizedCall = {
    type: 'track',
    messageId: 'm1',
    userId: 'u1',
    event: 'E',
    timestamp: '2026-11-21T09:30:00.000Z',
    receivedAt: '2026-11-21T09:30:00.000Z',
  };

  it('writes timestamps as UTC with milliseconds', () => {
    expect(JSON.parse(buildBody({ ...track, timestamp: '2026-11-21T10:30:00+01:00' }))).toMatchObject({
      timestamp: '2026-11-21T09:30:00.000Z',
    });
    expect(JSON.parse(buildBody({ ...track, timestamp: '2026-11-21T09:30:00.1Z' }))).toMatchObject({
      timestamp: '2026-11-21T09:30:00.100Z',
    });
  });

  it('leaves absent keys out', () => {
    expect(buildBody(track)).toBe('{"version":1,"type":"track","userId":"u1","event":"E","timestamp":"2026-11-21T09:30:00.000Z"}');
  });
});

describe('buildHeaders', () => {
  const body = '{"version":1,"type":"track"}';
  const base = { body, messageId: 'msg-1', attempt: 3 };

  /** Every value sent under `name`, whatever the case of the key. */
  const valuesOf = (headers: Record<string, string>, name: string) =>
    Object.entries(headers)
      .filter(([k]) => k.toLowerCase() === name)
      .map(([, v]) => v);

  it('sets the headers of docs/spec.md §4', () => {
    expect(buildHeaders({ ...base, sharedSecret: 'shh' })).toEqual({
      'user-agent': USER_AGENT,
      'content-type': 'application/json',
      'x-signature': signBody('shh', body),
      'x-eventrelay-message-id': 'msg-1',
      'x-eventrelay-attempt': '3',
    });
    expect(USER_AGENT).toBe('Eventrelay/1.0');
  });

  it('sends no X-Signature without a shared secret', () => {
    const headers = buildHeaders(base);
    expect(Object.keys(headers).map((k) => k.toLowerCase())).not.toContain('x-signature');
    expect(headers).toEqual({
      'user-agent': USER_AGENT,
      'content-type': 'application/json',
      'x-eventrelay-message-id': 'msg-1',
      'x-eventrelay-attempt': '3',
    });
  });

  it('signs the exact body it is given', () => {
    expect(buildHeaders({ ...base, body: '{"a":1}', sharedSecret: 's' })['x-signature']).toBe(signBody('s', '{"a":1}'));
    expect(buildHeaders({ ...base, body: '{"a": 1}', sharedSecret: 's' })['x-signature']).not.toBe(signBody('s', '{"a":1}'));
  });

  it('counts attempts from 1', () => {
    expect(buildHeaders({ ...base, attempt: 1 })['x-eventrelay-attempt']).toBe('1');
  });

  it('keeps configured static headers (names lowercased: HTTP header names are case-insensitive)', () => {
    const headers = buildHeaders({ ...base, staticHeaders: { Authorization: 'Bearer t0k3n', 'X-Tenant': 'acme' } });
    expect(headers['authorization']).toBe('Bearer t0k3n');
    expect(headers['x-tenant']).toBe('acme');
  });

  it('static headers cannot override ours', () => {
    const headers = buildHeaders({
      ...base,
      sharedSecret: 'shh',
      staticHeaders: {
        'user-agent': 'evil',
        'content-type': 'text/plain',
        'x-signature': 'forged',
        'x-eventrelay-message-id': 'other',
        'x-eventrelay-attempt': '99',
      },
    });
    expect(headers).toEqual({
      'user-agent': USER_AGENT,
      'content-type': 'application/json',
      'x-signature': signBody('shh', body),
      'x-eventrelay-message-id': 'msg-1',
      'x-eventrelay-attempt': '3',
    });
  });

  it('static headers cannot override ours when spelled in another case either', () => {
    const headers = buildHeaders({
      ...base,
      staticHeaders: {
        'User-Agent': 'evil',
        'Content-Type': 'text/plain',
        'X-Signature': 'forged',
        'X-Eventrelay-Message-Id': 'other',
        'X-EVENTRELAY-ATTEMPT': '99',
      },
    });
    // HTTP header names are case-insensitive: both spellings reach the receiver, and Node keeps
    // the first User-Agent it sees, so ours must be the only one.
    expect(valuesOf(headers, 'user-agent')).toEqual([USER_AGENT]);
    expect(valuesOf(headers, 'content-type')).toEqual(['application/json']);
    expect(valuesOf(headers, 'x-eventrelay-message-id')).toEqual(['msg-1']);
    expect(valuesOf(headers, 'x-eventrelay-attempt')).toEqual(['3']);
    // no shared secret: no signature at all, certainly not a configured one
    expect(valuesOf(headers, 'x-signature')).toEqual([]);
  });
});
