/**
 * signBody and verifySignature against the golden webhook fixtures (packages/config/fixtures/webhooks),
 * whose signatures were computed with openssl, not with this code.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { SIGNATURE_HEADER, signBody, verifySignature } from './signature.js';

const FIXTURES = path.resolve(__dirname, '../fixtures/webhooks');

interface SignatureFixture {
  readonly sharedSecret: string;
  readonly signature: string;
}

const cases = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.call.json'))
  .sort()
  .map((f) => {
    const base = f.slice(0, -'.call.json'.length);
    const fixture = JSON.parse(readFileSync(path.join(FIXTURES, f), 'utf8')) as SignatureFixture;
    return { base, ...fixture, bytes: readFileSync(path.join(FIXTURES, `${base}.body.json`)) };
  });

it('there are fixtures to sign, with distinct secrets and signatures', () => {
  expect(cases.length).toBeGreaterThanOrEqual(8);
  expect(new Set(cases.map((c) => c.signature)).size).toBe(cases.length);
});

describe.each(cases)('golden fixture $base', ({ sharedSecret, signature, bytes }) => {
  it('signBody gives the fixture signature, from the bytes or from their UTF-8 text', () => {
    expect(signBody(sharedSecret, bytes)).toBe(signature);
    expect(signBody(sharedSecret, bytes.toString('utf8'))).toBe(signature);
  });

  it('verifySignature accepts the fixture signature over the raw bytes', () => {
    expect(verifySignature(sharedSecret, bytes, signature)).toBe(true);
    expect(verifySignature(sharedSecret, bytes.toString('utf8'), signature)).toBe(true);
  });

  it('verifySignature refuses another secret, a changed byte, a trailing newline and a changed signature', () => {
    expect(verifySignature(`${sharedSecret}x`, bytes, signature)).toBe(false);
    const changed = Buffer.from(bytes);
    changed.writeUInt8(changed.readUInt8(changed.length - 2) ^ 1, changed.length - 2);
    expect(verifySignature(sharedSecret, changed, signature)).toBe(false);
    expect(verifySignature(sharedSecret, Buffer.concat([bytes, Buffer.from('\n')]), signature)).toBe(false);
    const last = signature.at(-1) === '0' ? '1' : '0';
    expect(verifySignature(sharedSecret, bytes, `${signature.slice(0, -1)}${last}`)).toBe(false);
  });
});

describe('verifySignature', () => {
  const secret = 'Jefe';
  const body = 'what do ya want for nothing?';
  // RFC 2202, HMAC-SHA1 test case 2.
  const good = 'effcdf6ae5eb2fa2d27416d5f184df9c259a7c79';

  it('matches the RFC 2202 vector', () => {
    expect(signBody(secret, body)).toBe(good);
    expect(verifySignature(secret, body, good)).toBe(true);
  });

  it('signs strings as UTF-8', () => {
    expect(signBody('k', 'ü')).toBe(signBody('k', Buffer.from('ü', 'utf8')));
    expect(signBody('k', 'ü')).not.toBe(signBody('k', Buffer.from('ü', 'latin1')));
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['upper case', good.toUpperCase()],
    ['one character short', good.slice(0, -1)],
    ['one character long', `${good}0`],
    ['not hex', `${good.slice(0, -1)}g`],
    ['with a scheme prefix', `sha1=${good}`],
    ['with spaces', ` ${good}`],
    ['repeated (an array of headers)', [good, good]],
  ])('refuses a header that is %s', (_name, header) => {
    expect(verifySignature(secret, body, header)).toBe(false);
  });

  it('names the header as Node reads it', () => {
    expect(SIGNATURE_HEADER).toBe('x-signature');
  });
});
