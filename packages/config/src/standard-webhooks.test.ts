import { destinationType } from './destination-catalog.js';
import { isMalformedWhsec, standardWebhooksKey, standardWebhooksSignature } from './standard-webhooks.js';

describe('Standard Webhooks signing', () => {
  it('keys a whsec_ secret with its base64 part decoded, any other secret with its UTF-8 bytes', () => {
    expect(standardWebhooksKey('whsec_c2VjcmV0LWJ5dGVz')).toEqual(Buffer.from('secret-bytes'));
    expect(standardWebhooksKey('plain secret é')).toEqual(Buffer.from('plain secret é', 'utf8'));
  });

  it('signs "<id>.<timestamp>.<body>" with HMAC-SHA256, base64, as v1', () => {
    // Worked out with: printf 'msg_1.1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret-bytes -binary | base64
    expect(standardWebhooksSignature(Buffer.from('secret-bytes'), 'msg_1', 1_700_000_000, '{"a":1}')).toBe(
      'v1,GZeV840jQAM6Ea8r5alejqyUkxGxHZH7ukXCV+Uvkc4=',
    );
  });

  it('tells a whsec_ secret the official libraries could not decode', () => {
    expect(isMalformedWhsec('whsec_c2VjcmV0LWJ5dGVz')).toBe(false);
    expect(isMalformedWhsec('whsec_bench_chaos_0001')).toBe(true);
    expect(isMalformedWhsec('anything else')).toBe(false);
  });

  it('refuses such a secret by field when standardWebhooks is on, and only then', () => {
    const webhooks = destinationType('Webhooks')!;
    const settings = { webhooks: [{ url: 'https://r.example/in' }], sharedSecret: 'whsec_not base64!' };
    expect(webhooks.settingsProblems({ ...settings, standardWebhooks: true }, 'settings')).toEqual([
      {
        field: 'settings.sharedSecret',
        message: 'starts with whsec_ but is not base64 after it: Standard Webhooks libraries would decode it and never verify',
      },
    ]);
    expect(webhooks.settingsProblems(settings, 'settings')).toEqual([]);
  });
});
