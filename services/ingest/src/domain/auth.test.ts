import { extractWriteKey } from './auth.js';

const basic = (credentials: string) => `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;

describe('extractWriteKey', () => {
  describe('HTTP Basic', () => {
    it('takes the user name with a trailing colon', () => {
      expect(extractWriteKey(basic('wk_live_123:'), {})).toBe('wk_live_123');
    });

    it('takes the user name without a colon', () => {
      expect(extractWriteKey(basic('wk_live_123'), {})).toBe('wk_live_123');
    });

    it('ignores the password', () => {
      expect(extractWriteKey(basic('wk_live_123:some-password'), {})).toBe('wk_live_123');
      expect(extractWriteKey(basic('wk_live_123:pass:with:colons'), {})).toBe('wk_live_123');
    });

    it('wins over a writeKey in the body', () => {
      expect(extractWriteKey(basic('from-header:'), { writeKey: 'from-body' })).toBe('from-header');
    });

    it('accepts the scheme in any case and surrounding whitespace', () => {
      const token = Buffer.from('wk1:').toString('base64');
      expect(extractWriteKey(`basic ${token}`, {})).toBe('wk1');
      expect(extractWriteKey(`BASIC ${token}`, {})).toBe('wk1');
      expect(extractWriteKey(`  Basic   ${token}  `, {})).toBe('wk1');
    });

    it('accepts base64 without padding', () => {
      const token = Buffer.from('abcd').toString('base64');
      expect(token).toBe('YWJjZA==');
      expect(extractWriteKey('Basic YWJjZA', {})).toBe('abcd');
    });

    it('keeps UTF-8 user names', () => {
      expect(extractWriteKey(basic('schlüssel:'), {})).toBe('schlüssel');
    });

    it('falls through to the body when the user name is empty', () => {
      expect(extractWriteKey(basic(':only-password'), { writeKey: 'from-body' })).toBe('from-body');
      expect(extractWriteKey(basic(':'), { writeKey: 'from-body' })).toBe('from-body');
      expect(extractWriteKey(basic(':only-password'), {})).toBeUndefined();
    });
  });

  describe('other Authorization headers', () => {
    it('takes the key from the body with a Bearer token', () => {
      expect(extractWriteKey('Bearer some-token', { writeKey: 'from-body' })).toBe('from-body');
      expect(extractWriteKey(`Bearer ${Buffer.from('wk:').toString('base64')}`, {})).toBeUndefined();
    });

    it.each([
      ['empty', ''],
      ['the scheme alone', 'Basic'],
      ['the scheme and a space', 'Basic '],
      ['characters outside base64', 'Basic !!!!'],
      ['two tokens', `Basic ${Buffer.from('a:').toString('base64')} ${Buffer.from('b:').toString('base64')}`],
      ['no space after the scheme', `Basic${Buffer.from('wk:').toString('base64')}`],
      ['another scheme', `Digest ${Buffer.from('wk:').toString('base64')}`],
      ['a bare token', Buffer.from('wk:').toString('base64')],
    ])('falls through to the body for %s', (_label, header) => {
      expect(extractWriteKey(header, { writeKey: 'from-body' })).toBe('from-body');
      expect(extractWriteKey(header, {})).toBeUndefined();
    });
  });

  describe('the body', () => {
    it('takes writeKey when there is no Authorization header', () => {
      expect(extractWriteKey(undefined, { writeKey: 'from-body' })).toBe('from-body');
    });

    it.each([[''], [123], [null], [{ key: 'x' }], [['wk']], [true]])('ignores writeKey %p', (writeKey) => {
      expect(extractWriteKey(undefined, { writeKey })).toBeUndefined();
    });

    it('is undefined when there is no key anywhere', () => {
      expect(extractWriteKey(undefined, {})).toBeUndefined();
      expect(extractWriteKey(undefined, { batch: [{ writeKey: 'in-an-item' }] })).toBeUndefined();
    });
  });
});
