import { createHash } from 'node:crypto';
import { profileId, profileKeys } from './profile-keys.js';

const keys = profileKeys('{t}');

describe('profile keys', () => {
  it('keeps the key profiles always had for a userId of up to 64 bytes', () => {
    expect(keys.profile('u-1')).toBe('{t}:prof:u:u-1');
    const longest = 'a'.repeat(64);
    expect(keys.profile(longest)).toBe(`{t}:prof:u:${longest}`);
    expect(keys.formerProfile(longest)).toBeUndefined();
  });

  it('names a longer userId by the base64url sha256 of it, so the key stays short', () => {
    const id = 'x'.repeat(512);
    const digest = createHash('sha256').update(id).digest('base64url');
    expect(keys.profile(id)).toBe(`{t}:prof:h:${digest}`);
    expect(keys.profile(id)).toHaveLength('{t}:prof:h:'.length + 43);
    expect(keys.profile('a'.repeat(65))).toMatch(/^\{t\}:prof:h:[A-Za-z0-9_-]{43}$/);
    // Where it was kept before, moved or erased with it.
    expect(keys.formerProfile(id)).toBe(`{t}:prof:u:${id}`);
  });

  it('counts bytes, not characters: 22 three-byte characters are 66 bytes', () => {
    expect(profileId('€'.repeat(21))).toBe(`u:${'€'.repeat(21)}`);
    expect(profileId('€'.repeat(22))).toMatch(/^h:/);
  });

  it('gives one name per userId, and different ones to different ids', () => {
    const a = 'a'.repeat(100);
    expect(keys.profile(a)).toBe(keys.profile(`${a}`));
    expect(keys.profile(a)).not.toBe(keys.profile(`${a}b`));
    // A short id that looks like a digest cannot land on a long id's key: the tag differs.
    const digestLike = profileId(a).slice(2);
    expect(keys.profile(digestLike)).not.toBe(keys.profile(a));
  });
});
