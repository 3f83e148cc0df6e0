import type { NormalizedCall } from '@eventrelay/config';
import { isSuppressed, type Suppression } from './suppression.js';

const call = (userId?: string): NormalizedCall => ({
  type: 'track',
  messageId: 'm-1',
  event: 'E',
  timestamp: '2026-11-21T09:30:00.000Z',
  receivedAt: '2026-11-21T09:30:00.000Z',
  ...(userId === undefined ? { anonymousId: 'anon-1' } : { userId }),
});

const all: Suppression = { allSources: true };
const listed: Suppression = { allSources: false, sourceIds: ['src-a', 'src-b'] };

describe('isSuppressed', () => {
  it.each<[string, Suppression | undefined, string, boolean]>([
    ['no suppression', undefined, 'src-a', false],
    ['all sources, from any source', all, 'src-z', true],
    ['listed sources, from a listed source', listed, 'src-a', true],
    ['listed sources, from the other listed source', listed, 'src-b', true],
    ['listed sources, from another source', listed, 'src-c', false],
    ['an empty source list', { allSources: false, sourceIds: [] }, 'src-a', false],
  ])('%s → %p', (_label, suppression, sourceId, expected) => {
    expect(isSuppressed(call('u-1'), sourceId, suppression)).toBe(expected);
  });

  it('source ids compare exactly', () => {
    expect(isSuppressed(call('u-1'), 'SRC-A', listed)).toBe(false);
  });

  it('a call without a userId is never suppressed', () => {
    expect(isSuppressed(call(), 'src-a', all)).toBe(false);
  });
});
