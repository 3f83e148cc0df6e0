import { authenticate, parseAdminTokens, tokenId } from './tokens';

describe('admin tokens', () => {
  const tokens = parseAdminTokens('first-token-0123456789, second-token-0123456789');

  it('parses a comma-separated list and names each token by a hash prefix', () => {
    expect(Array.isArray(tokens) && tokens.map((t) => t.id)).toEqual([
      tokenId('first-token-0123456789'),
      tokenId('second-token-0123456789'),
    ]);
    expect(tokenId('first-token-0123456789')).toMatch(/^tok_[0-9a-f]{8}$/);
  });

  it('refuses a missing, short or oddly spelled token without echoing it', () => {
    expect(parseAdminTokens(undefined)).toMatch(/is required/);
    expect(parseAdminTokens('short')).toBe('token 1 must be 16 to 256 characters of letters, digits and . _ ~ + / = -');
    const bad = parseAdminTokens('fine-token-0123456789,has space in it 0123456789');
    expect(bad).toMatch(/^token 2 /);
    expect(bad).not.toContain('space');
  });

  it('authenticates a Bearer header carrying one of the tokens, and nothing else', () => {
    if (typeof tokens === 'string') throw new Error(tokens);
    expect(authenticate('Bearer second-token-0123456789', tokens)?.id).toBe(tokenId('second-token-0123456789'));
    expect(authenticate('bearer first-token-0123456789', tokens)?.id).toBe(tokenId('first-token-0123456789'));
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer wrong-token-0123456789',
      'Basic first-token-0123456789',
      'Bearer first-token-0123456789x',
      'first-token-0123456789',
    ]) {
      expect(authenticate(header, tokens)).toBeUndefined();
    }
  });
});
