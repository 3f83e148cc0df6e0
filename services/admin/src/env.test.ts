import { ConfigError } from '@eventrelay/config';
import { loadEnv } from './env';

const base = { ADMIN_TOKEN: 'a-token-of-sixteen-chars' };

describe('ADMIN_INTAKE_URL', () => {
  it('defaults to the local intake and drops a trailing slash', () => {
    expect(loadEnv(base).ADMIN_INTAKE_URL).toBe('http://localhost:8080');
    expect(loadEnv({ ...base, ADMIN_INTAKE_URL: 'https://events.example.com/' }).ADMIN_INTAKE_URL).toBe('https://events.example.com');
  });

  it('refuses what is not an http or https URL, naming the variable', () => {
    for (const value of ['events.example.com', 'ftp://events.example.com', 'not a url']) {
      expect(() => loadEnv({ ...base, ADMIN_INTAKE_URL: value })).toThrow(ConfigError);
      expect(() => loadEnv({ ...base, ADMIN_INTAKE_URL: value })).toThrow(/ADMIN_INTAKE_URL must be an http or https URL/);
    }
  });
});
