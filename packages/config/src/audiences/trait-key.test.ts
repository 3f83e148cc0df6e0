import { traitKey } from './trait-key.js';

// Expected values follow the rule documented in trait-key.ts, step by step.
describe('traitKey', () => {
  it.each([
    // The example of docs/spec.md §5.
    ['Trial Users 2', 'trial_users_2'],
    // Spaces and punctuation: each run becomes one `_`, none at either end.
    ['VIP-customers (EU)!', 'vip_customers_eu'],
    ['  leading and trailing  ', 'leading_and_trailing'],
    ['a -- b', 'a_b'],
    ['already_snake', 'already_snake'],
    // camelCase and acronyms (step 2).
    ['trialUsers', 'trial_users'],
    ['HTMLParser Fans', 'html_parser_fans'],
    ['ABC', 'abc'],
    // Digits: an upper-case letter after a digit starts a word; a digit after a letter does not.
    ['2FA enabled', '2_fa_enabled'],
    ['Users2Go', 'users2_go'],
    ['Plan 9', 'plan_9'],
    // Accents dropped (step 1), other scripts kept as letters (step 4).
    ['Café Fans', 'cafe_fans'],
    ['Ünïcode', 'unicode'],
    ['Пользователи Pro', 'пользователи_pro'],
    ['Straße', 'straße'],
  ])('%j → %j', (name, key) => {
    expect(traitKey(name)).toBe(key);
  });

  it('keeps the voiced mark of Japanese kana (ザ is not an accent)', () => {
    const key = traitKey('日本のユーザー');
    expect(key).toBe('\u65e5\u672c\u306e\u30e6\u30fc\u30b6\u30fc');
    expect(key).toContain('\u30b6'); // ザ, composed
    expect(key).not.toContain('\u30b5'); // サ without its mark
    // Written decomposed (サ + combining dakuten), the name gives the same key.
    expect(traitKey('日本のユー\u30b5\u3099ー')).toBe(key);
  });

  it('treats the composed and decomposed forms of an accented name alike', () => {
    expect(traitKey('Cafe\u0301 Fans')).toBe(traitKey('Caf\u00e9 Fans'));
  });

  it.each(['!!!', '___', '  ', ''])('%j has no letter or digit, so no key', (name) => {
    expect(traitKey(name)).toBe('');
  });

  it('gives only lower-case letters, digits and single inner underscores', () => {
    for (const name of ['Trial Users 2', 'VIP-customers (EU)!', 'HTMLParser Fans', 'a -- b', 'Café Fans']) {
      expect(traitKey(name)).toMatch(/^[a-z0-9]+(_[a-z0-9]+)*$/);
    }
  });
});
