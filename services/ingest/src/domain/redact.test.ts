import { REDACTED, redactSecrets } from './redact';

describe('redactSecrets', () => {
  it('replaces values under secret-looking keys at any depth and keeps the rest', () => {
    const call = {
      type: 'identify',
      userId: 'u1',
      writeKey: 'wk_live',
      traits: { email: 'a@b.c', password: 'hunter2', nested: [{ apiKey: 'k', api_key: 'k2', keep: 1 }] },
      context: { device: { token: 'push' }, headers: { Authorization: 'Bearer x' }, library: { name: 'n' } },
      properties: { creditCard: '4111', card_number: '4111', cvv: '123', ssn: '1', clientSecret: 's', passwd: 'p', private_key: 'pk' },
    };
    expect(redactSecrets(call)).toEqual({
      type: 'identify',
      userId: 'u1',
      writeKey: REDACTED,
      traits: { email: 'a@b.c', password: REDACTED, nested: [{ apiKey: REDACTED, api_key: REDACTED, keep: 1 }] },
      context: { device: { token: REDACTED }, headers: { Authorization: REDACTED }, library: { name: 'n' } },
      properties: {
        creditCard: REDACTED,
        card_number: REDACTED,
        cvv: REDACTED,
        ssn: REDACTED,
        clientSecret: REDACTED,
        passwd: REDACTED,
        private_key: REDACTED,
      },
    });
  });

  it('leaves keys that merely contain a secret word alone when they are not secrets', () => {
    const call = { properties: { passengers: 3, tokenCount: 2, compass: 'N', bypass: true } };
    // tokenCount holds "token": a false positive we accept rather than risk showing a token.
    expect(redactSecrets(call)).toEqual({ properties: { passengers: 3, tokenCount: REDACTED, compass: 'N', bypass: true } });
  });

  it('does not change its input', () => {
    const call = { password: 'x' };
    redactSecrets(call);
    expect(call.password).toBe('x');
  });
});
