/**
 * The golden normalization fixtures are read by jest and by the Go tests: check their format here,
 * and that every call they expect ingest to accept is a valid NormalizedCall per the JSON schema.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describeSchemaErrors, validateNormalizedCall } from './schemas.js';

const FIXTURE_DIR = path.resolve(__dirname, '../fixtures/normalize');
const files = readdirSync(FIXTURE_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TIME_FIELDS = ['timestamp', 'originalTimestamp', 'sentAt', 'receivedAt'] as const;

it('there are fixtures to check', () => {
  expect(files.length).toBeGreaterThanOrEqual(9);
  expect(readdirSync(FIXTURE_DIR).filter((f) => !f.endsWith('.json'))).toEqual([]);
});

describe.each(files)('%s', (file) => {
  const fixture = JSON.parse(readFileSync(path.join(FIXTURE_DIR, file), 'utf8')) as Record<string, unknown>;
  const expected = fixture['expected'] as { accepted: Record<string, unknown>[]; rejected: Record<string, unknown>[] };

  it('has the documented format and nothing else', () => {
    expect(Object.keys(fixture).sort()).toEqual(['body', 'expected', 'messageIds', 'name', 'receivedAt', 'route']);
    expect(typeof fixture['name']).toBe('string');
    expect(fixture['route']).toMatch(/^\/v1\/(identify|track|page|screen|group|alias|[itpsga]|batch|import|b)\/?$/);
    expect(fixture['receivedAt']).toMatch(ISO_MS);
    expect(typeof fixture['body']).toBe('object');
    expect(Array.isArray(fixture['body'])).toBe(false);
    expect(Array.isArray(fixture['messageIds'])).toBe(true);
    for (const id of fixture['messageIds'] as unknown[]) expect(typeof id).toBe('string');
    expect(Object.keys(expected).sort()).toEqual(['accepted', 'rejected']);
    for (const r of expected.rejected) {
      expect(Object.keys(r).sort()).toEqual(['code', 'index', 'message']);
      expect(Number.isInteger(r['index'])).toBe(true);
      expect(['invalid_event', 'payload_too_large']).toContain(r['code']);
    }
  });

  it('expects only calls that are valid NormalizedCalls', () => {
    expect(expected.accepted.length).toBeGreaterThan(0);
    for (const call of expected.accepted) {
      const valid = validateNormalizedCall(call);
      expect(describeSchemaErrors(validateNormalizedCall.errors)).toEqual([]);
      expect(valid).toBe(true);
      for (const field of TIME_FIELDS) if (call[field] !== undefined) expect(call[field]).toMatch(ISO_MS);
      expect(call['receivedAt']).toBe(fixture['receivedAt']);
    }
  });
});

describe('validateNormalizedCall', () => {
  const ok = {
    type: 'track',
    messageId: 'm1',
    event: 'E',
    userId: 'u1',
    receivedAt: '2026-11-21T09:30:00.000Z',
    timestamp: '2026-11-21T09:30:00.000Z',
  };

  it('accepts a minimal call and unknown keys', () => {
    expect(validateNormalizedCall(ok)).toBe(true);
    expect(validateNormalizedCall({ ...ok, channel: 'server' })).toBe(true);
  });

  it.each([
    ['no messageId', { ...ok, messageId: undefined }],
    ['a long messageId', { ...ok, messageId: 'm'.repeat(101) }],
    ['an unknown type', { ...ok, type: 'purchase' }],
    ['a numeric userId', { ...ok, userId: 5 }],
    ['properties as an array', { ...ok, properties: [] }],
    ['no timestamp', { ...ok, timestamp: undefined }],
  ])('refuses %s', (_label, call) => {
    expect(validateNormalizedCall(JSON.parse(JSON.stringify(call)))).toBe(false);
  });
});
