import { parseRetryAfter } from './retry-after.js';

const NOW = Date.parse('2026-11-21T09:30:00.000Z');

describe('parseRetryAfter', () => {
  it('is undefined when the header is absent', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });

  describe('delay-seconds', () => {
    it.each([
      ['0', 0],
      ['1', 1000],
      ['120', 120_000],
      ['3600', 3_600_000],
      ['86400', 86_400_000],
      [' 30 ', 30_000],
      ['007', 7000],
    ])('%p → %i ms', (value, ms) => {
      expect(parseRetryAfter(value, NOW)).toBe(ms);
    });

    it('does not depend on the clock', () => {
      expect(parseRetryAfter('60', 0)).toBe(60_000);
      expect(parseRetryAfter('60', NOW + 1e9)).toBe(60_000);
    });
  });

  describe('HTTP-date', () => {
    it.each([
      ['IMF-fixdate', 'Sat, 21 Nov 2026 09:32:00 GMT', 120_000],
      ['IMF-fixdate one hour ahead', 'Sat, 21 Nov 2026 10:30:00 GMT', 3_600_000],
      ['IMF-fixdate next day', 'Sun, 22 Nov 2026 09:30:00 GMT', 86_400_000],
      ['IMF-fixdate equal to now', 'Sat, 21 Nov 2026 09:30:00 GMT', 0],
      ['RFC 850', 'Saturday, 21-Nov-26 09:35:00 GMT', 300_000],
      ['RFC 850 next day', 'Sunday, 22-Nov-26 09:30:00 GMT', 86_400_000],
    ])('%s %p → %i ms from now', (_form, value, ms) => {
      expect(parseRetryAfter(value, NOW)).toBe(ms);
    });

    it('is relative to the now it is given', () => {
      expect(parseRetryAfter('Sat, 21 Nov 2026 09:32:00 GMT', NOW + 60_000)).toBe(60_000);
    });

    it.each([
      ['IMF-fixdate a second ago', 'Sat, 21 Nov 2026 09:29:59 GMT'],
      ['IMF-fixdate years ago', 'Sun, 06 Nov 1994 08:49:37 GMT'],
      ['RFC 850 in the past', 'Sunday, 06-Nov-94 08:49:37 GMT'],
    ])('a date in the past (%s) → 0', (_form, value) => {
      expect(parseRetryAfter(value, NOW)).toBe(0);
    });
  });

  describe('unreadable values', () => {
    it.each([
      ['empty', ''],
      ['blank', '   '],
      ['negative', '-1'],
      ['negative large', '-3600'],
      ['decimal', '1.5'],
      ['decimal with zero fraction', '120.0'],
      ['exponent', '1e3'],
      ['a unit', '120s'],
      ['two numbers', '1 2'],
      ['a plus sign', '+5'],
      ['hex', '0x10'],
      ['words', 'soon'],
      ['garbage', '!!!'],
      ['a date that is not a date', 'Foo, 99 Bar 2026 99:99:99 GMT'],
      ['ISO 8601', '2026-11-21T09:32:00Z'],
      ['a date in a zone other than GMT', 'Sat, 21 Nov 2026 09:32:00 +0100'],
      ['a date without zone', 'Sat, 21 Nov 2026 09:32:00'],
      ['a date in local time words', 'Sat, 21 Nov 2026 09:32:00 PST'],
    ])('%s (%p) → undefined', (_label, value) => {
      expect(parseRetryAfter(value, NOW)).toBeUndefined();
    });
  });
});
