import { canonicalIso, correctedTimestamp, isoUtc, parseTimestamp } from './timestamps.js';

const at = (iso: string) => Date.parse(iso);

describe('parseTimestamp', () => {
  describe('RFC 3339', () => {
    it.each([
      ['2026-11-21T09:30:00Z', '2026-11-21T09:30:00.000Z'],
      ['2026-11-21T09:30:00z', '2026-11-21T09:30:00.000Z'],
      ['2026-11-21t09:30:00Z', '2026-11-21T09:30:00.000Z'],
      ['2026-11-21T09:30:00.123Z', '2026-11-21T09:30:00.123Z'],
      ['2026-11-21T09:30:00+00:00', '2026-11-21T09:30:00.000Z'],
      ['2026-11-21T09:30:00-00:00', '2026-11-21T09:30:00.000Z'],
      ['2026-11-21T11:30:00+02:00', '2026-11-21T09:30:00.000Z'],
      ['2026-11-21T15:00:00+05:30', '2026-11-21T09:30:00.000Z'],
      ['2026-11-21T01:30:00-08:00', '2026-11-21T09:30:00.000Z'],
      // Across a day boundary, in both directions.
      ['2026-11-20T23:30:00-10:00', '2026-11-21T09:30:00.000Z'],
      ['2026-11-22T00:30:00+15:00', '2026-11-21T09:30:00.000Z'],
    ])('%s is %s', (input, expected) => {
      expect(parseTimestamp(input)).toBe(at(expected));
    });
  });

  describe('Go v2 and other offsets without a colon', () => {
    it.each([
      ['2016-04-26T11:14:48-0700', '2016-04-26T18:14:48.000Z'],
      ['2016-04-26T11:14:48+0200', '2016-04-26T09:14:48.000Z'],
      ['2016-04-26T11:14:48+0530', '2016-04-26T05:44:48.000Z'],
      ['2016-04-26T11:14:48.5-0700', '2016-04-26T18:14:48.500Z'],
      // Hours only.
      ['2016-04-26T11:14:48-07', '2016-04-26T18:14:48.000Z'],
      ['2016-04-26T11:14:48+03', '2016-04-26T08:14:48.000Z'],
    ])('%s is %s', (input, expected) => {
      expect(parseTimestamp(input)).toBe(at(expected));
    });
  });

  describe('fractions of 1 to 9 digits are truncated to milliseconds', () => {
    it.each([
      ['.1', 100],
      ['.12', 120],
      ['.123', 123],
      ['.1239', 123],
      ['.12399', 123],
      ['.123999', 123],
      ['.1239999', 123],
      ['.12399999', 123],
      ['.999999999', 999],
      ['.000000001', 0],
      ['.05', 50],
    ])('fraction %s gives %i ms', (fraction, ms) => {
      expect(parseTimestamp(`2026-11-21T09:30:00${fraction}Z`)).toBe(at('2026-11-21T09:30:00.000Z') + ms);
    });

    it('truncates rather than rounds, also with an offset', () => {
      expect(parseTimestamp('2016-04-26T11:14:48.987654321-07:00')).toBe(at('2016-04-26T18:14:48.987Z'));
    });
  });

  describe('other lenient forms', () => {
    it('accepts a space instead of the T', () => {
      expect(parseTimestamp('2026-11-21 09:30:00')).toBe(at('2026-11-21T09:30:00.000Z'));
      expect(parseTimestamp('2026-11-21 09:30:00.250+01:00')).toBe(at('2026-11-21T08:30:00.250Z'));
    });

    it('accepts a space before the offset', () => {
      expect(parseTimestamp('2026-11-21 09:30:00 +0100')).toBe(at('2026-11-21T08:30:00.000Z'));
      expect(parseTimestamp('2026-11-21T09:30:00 Z')).toBe(at('2026-11-21T09:30:00.000Z'));
    });

    it('takes a date alone as midnight UTC', () => {
      expect(parseTimestamp('2026-11-21')).toBe(at('2026-11-21T00:00:00.000Z'));
    });

    it('takes a value without an offset as UTC, not local time', () => {
      expect(parseTimestamp('2026-11-21T09:30:00')).toBe(at('2026-11-21T09:30:00.000Z'));
      expect(parseTimestamp('2026-11-21T09:30:00.5')).toBe(at('2026-11-21T09:30:00.500Z'));
    });

    it('accepts hours and minutes without seconds', () => {
      expect(parseTimestamp('2026-11-21T09:30')).toBe(at('2026-11-21T09:30:00.000Z'));
      expect(parseTimestamp('2026-11-21T09:30+01:00')).toBe(at('2026-11-21T08:30:00.000Z'));
    });

    it('ignores surrounding whitespace', () => {
      expect(parseTimestamp('  2026-11-21T09:30:00Z\n')).toBe(at('2026-11-21T09:30:00.000Z'));
    });
  });

  describe('anything else counts as absent', () => {
    it.each([
      [''],
      ['   '],
      ['now'],
      ['garbage'],
      ['yesterday at noon'],
      ['1479720600000'],
      ['Mon, 21 Nov 2026 09:30:00 GMT'],
      ['21/11/2026'],
      ['2026/11/21 09:30:00'],
      ['2026-11-21T'],
      ['2026-11-21T9:30:00Z'],
      ['26-11-21T09:30:00Z'],
      ['2026-11-21T09:30:00.Z'],
      ['2026-11-21T09:30:00ZZ'],
      ['2026-11-21T09:30:00+1'],
      ['2026-11-21T09:30:00+01:0'],
      ['2026-11-21T09:30:00 UTC'],
      ['2026-11-21T09:30:00Z trailing'],
      ['x2026-11-21T09:30:00Z'],
    ])('%j', (input) => {
      expect(parseTimestamp(input)).toBeUndefined();
    });

    it.each([
      ['month 13', '2026-13-01T00:00:00Z'],
      ['month 00', '2026-00-10'],
      ['day 00', '2026-11-00'],
      ['day 32', '2026-01-32'],
      ['hour 25', '2026-11-21T25:00:00Z'],
      ['minute 61', '2026-11-21T09:61:00Z'],
      ['second 60', '2026-11-21T09:30:60Z'],
      ['offset +99:99', '2026-11-21T09:30:00+99:99'],
      ['offset +2400', '2026-11-21T09:30:00+2400'],
    ])('absurd value (%s) %s', (_label, input) => {
      expect(parseTimestamp(input)).toBeUndefined();
    });

    // RFC 3339 section 5.7: the day must exist in its month. Rolling over into the next month would
    // store a time the client never sent instead of treating the value as absent.
    it.each([
      ['30 February', '2016-02-30T00:00:00Z'],
      ['29 February of a common year', '2015-02-29'],
      ['31 April', '2016-04-31T12:00:00Z'],
      ['31 November', '2026-11-31'],
    ])('a day that does not exist (%s) %s', (_label, input) => {
      expect(parseTimestamp(input)).toBeUndefined();
    });

    it('accepts 29 February of a leap year', () => {
      expect(parseTimestamp('2016-02-29')).toBe(at('2016-02-29T00:00:00.000Z'));
    });

    it('refuses values longer than 64 characters even when they would parse', () => {
      const long = `2026-11-21T09:30:00Z${' '.repeat(45)}`;
      expect(long.length).toBe(65);
      expect(parseTimestamp(long)).toBeUndefined();
      expect(parseTimestamp(long.slice(0, 64))).toBe(at('2026-11-21T09:30:00.000Z'));
    });

    it.each([
      [undefined],
      [null],
      [0],
      [1479720600000],
      [true],
      [{}],
      [[]],
      [['2026-11-21T09:30:00Z']],
      [new Date('2026-11-21T09:30:00Z')],
    ])('non-string %p', (input) => {
      expect(parseTimestamp(input)).toBeUndefined();
    });
  });
});

describe('isoUtc', () => {
  it('prints UTC with exactly three fraction digits', () => {
    expect(isoUtc(at('2026-11-21T09:30:00Z'))).toBe('2026-11-21T09:30:00.000Z');
    expect(isoUtc(at('2026-11-21T09:30:00.007Z'))).toBe('2026-11-21T09:30:00.007Z');
    expect(isoUtc(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(isoUtc(-1)).toBe('1969-12-31T23:59:59.999Z');
  });

  it('round-trips what parseTimestamp reads', () => {
    expect(isoUtc(parseTimestamp('2016-04-26T11:14:48.1234-0700') as number)).toBe('2016-04-26T18:14:48.123Z');
  });
});

describe('correctedTimestamp', () => {
  const receivedAt = at('2026-11-21T09:30:00.000Z');

  it('is receivedAt - (sentAt - originalTimestamp) when both are known', () => {
    // Client clock 10 minutes behind; the call waited 2.5 s in the client before it was sent.
    const original = at('2026-11-21T09:17:30.000Z');
    const sentAt = at('2026-11-21T09:20:00.000Z');
    expect(correctedTimestamp(receivedAt, original, sentAt)).toBe(at('2026-11-21T09:27:30.000Z'));
  });

  it('is exact to the millisecond for a clock that runs ahead', () => {
    const original = at('2026-11-21T10:00:00.001Z');
    const sentAt = at('2026-11-21T10:00:00.999Z');
    expect(correctedTimestamp(receivedAt, original, sentAt)).toBe(receivedAt - 998);
  });

  it('is receivedAt when the call was sent at once', () => {
    const t = at('2001-01-01T00:00:00.000Z');
    expect(correctedTimestamp(receivedAt, t, t)).toBe(receivedAt);
  });

  it('lands after receivedAt when sentAt is before the original timestamp', () => {
    expect(correctedTimestamp(receivedAt, 5000, 2000)).toBe(receivedAt + 3000);
  });

  it('is the original timestamp when sentAt is unknown', () => {
    expect(correctedTimestamp(receivedAt, 1234, undefined)).toBe(1234);
  });

  it('is receivedAt when the original timestamp is unknown, whatever sentAt is', () => {
    expect(correctedTimestamp(receivedAt, undefined, undefined)).toBe(receivedAt);
    expect(correctedTimestamp(receivedAt, undefined, receivedAt - 60_000)).toBe(receivedAt);
  });

  it('falls back to the original timestamp when the correction leaves the range of a Date', () => {
    const maxEpoch = 8.64e15;
    expect(correctedTimestamp(0, maxEpoch, -maxEpoch)).toBe(maxEpoch);
    expect(correctedTimestamp(0, -maxEpoch, maxEpoch)).toBe(-maxEpoch);
    expect(correctedTimestamp(receivedAt, 0, 9e15)).toBe(0);
  });

  it('keeps a correction that is exactly at the edge of the range', () => {
    const last = Date.parse('9999-12-31T23:59:59.999Z');
    const first = Date.parse('0000-01-01T00:00:00.000Z');
    expect(correctedTimestamp(last, 10, 10)).toBe(last);
    expect(correctedTimestamp(first, 10, 10)).toBe(first);
    expect(correctedTimestamp(last + 1, 10, 10)).toBe(10);
  });
});

describe('canonicalIso', () => {
  it('returns a string already in canonical form as it is', () => {
    const text = '2026-11-21T09:30:00.123Z';
    expect(canonicalIso(text, Date.parse(text))).toBe(text);
  });
  it('re-formats anything else from the epoch value', () => {
    expect(canonicalIso('2026-11-21T10:30:00.123+01:00', Date.parse('2026-11-21T09:30:00.123Z'))).toBe('2026-11-21T09:30:00.123Z');
    expect(canonicalIso('2026-11-21T09:30:00Z', Date.parse('2026-11-21T09:30:00Z'))).toBe('2026-11-21T09:30:00.000Z');
    expect(canonicalIso(12, 0)).toBe('1970-01-01T00:00:00.000Z');
  });
});

describe('four-digit years and hours only', () => {
  it('re-formats a canonical-looking 24:00 instead of keeping it', () => {
    const text = '2026-01-01T24:00:00.000Z';
    expect(canonicalIso(text, Date.parse(text))).toBe('2026-01-02T00:00:00.000Z');
  });
  it('falls back to the original timestamp when skew correction leaves years 0000 to 9999', () => {
    const original = Date.parse('0000-01-01T00:00:00.000Z');
    const sentAt = Date.parse('9999-12-31T23:59:59.999Z');
    expect(correctedTimestamp(Date.parse('2026-11-21T09:30:00.000Z'), original, sentAt)).toBe(original);
  });
});
