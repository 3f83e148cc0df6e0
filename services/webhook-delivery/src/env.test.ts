import { ConfigError } from '@eventrelay/config';
import { loadEnv } from './env';

const MIB = 1024 * 1024;

describe('the byte caps per destination', () => {
  it('default to 64 MiB each', () => {
    const env = loadEnv({});
    expect(env.DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION).toBe(64 * MIB);
    expect(env.DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION).toBe(64 * MIB);
  });

  it('take whole bytes from 1 MiB to 64 GiB; the retry cap also 0 (no cap)', () => {
    const env = loadEnv({ DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION: ' 1048576 ', DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION: '0' });
    expect(env.DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION).toBe(MIB);
    expect(env.DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION).toBe(0);
    expect(loadEnv({ DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION: String(64 * 1024 * MIB) }).DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION).toBe(
      64 * 1024 * MIB,
    );
  });

  it('refuse a cap below 1 MiB, above 64 GiB, not a whole number, or 0 for the dead letters, naming the variable', () => {
    const refused: [string, string, RegExp][] = [
      ['DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION', '0', /must be 1048576 \(1 MiB\) to 68719476736 \(64 GiB\) bytes, got 0/],
      ['DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION', '16mb', /must be a whole number of bytes/],
      ['DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION', '1048575', /must be 0 \(no cap\) or 1048576 \(1 MiB\) to 68719476736 \(64 GiB\) bytes/],
      ['DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION', String(64 * 1024 * MIB + 1), /must be 0 \(no cap\) or .* bytes, got 68719476737/],
      ['DELIVERY_RETRY_MAX_BYTES_PER_DESTINATION', '-1', /must be a whole number of bytes/],
    ];
    for (const [name, value, why] of refused) {
      expect(() => loadEnv({ [name]: value })).toThrow(ConfigError);
      expect(() => loadEnv({ [name]: value })).toThrow(new RegExp(`${name} ${why.source}`));
    }
  });
});
