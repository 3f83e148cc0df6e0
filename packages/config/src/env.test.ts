import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from './errors.js';
import { commonEnv, describeEnv, integer, loadEnvFrom, oneOf, port, required, text, type EnvSource } from './env.js';

function loadError(spec: Parameters<typeof loadEnvFrom>[0], source: EnvSource): ConfigError {
  try {
    loadEnvFrom(spec, source);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadEnvFrom with the common variables', () => {
  it('uses the defaults when nothing is set', () => {
    expect(loadEnvFrom(commonEnv, {})).toEqual({
      REDIS_URL: 'redis://127.0.0.1:6379',
      EVENTRELAY_PREFIX: 'eventrelay',
      LOG_LEVEL: 'info',
      REDIS_TLS_CA_FILE: undefined,
      REDIS_SENTINELS: undefined,
      REDIS_SENTINEL_NAME: 'eventrelay',
      REDIS_SENTINEL_PASSWORD: undefined,
      REDIS_CLUSTER_NODES: undefined,
      EVENTRELAY_SHARDS: 1,
      EVENTRELAY_CONSUME_SHARDS: 'all',
      EVENTRELAY_CONFIG: undefined,
      EVENTRELAY_CONFIG_MODE: 'seed',
    });
  });

  it('treats blank values as unset', () => {
    expect(loadEnvFrom(commonEnv, { REDIS_URL: '', EVENTRELAY_PREFIX: '  ', LOG_LEVEL: '', EVENTRELAY_CONFIG: ' ' })).toEqual(
      loadEnvFrom(commonEnv, {}),
    );
  });

  it('reads the values that are set', () => {
    const env = loadEnvFrom(commonEnv, {
      REDIS_URL: 'rediss://user:pw@redis.internal:6380/2',
      EVENTRELAY_PREFIX: 'staging',
      LOG_LEVEL: 'debug',
      EVENTRELAY_CONFIG: '/etc/eventrelay/config.json',
      EVENTRELAY_CONFIG_MODE: 'sync',
      REDIS_SENTINELS: 'sentinel-0.redis:26379, 10.0.0.7:26380,[::1]:26381',
      REDIS_SENTINEL_NAME: 'er-primary',
      REDIS_SENTINEL_PASSWORD: 'sentinel-pw',
    });
    expect(env).toEqual({
      REDIS_URL: 'rediss://user:pw@redis.internal:6380/2',
      EVENTRELAY_PREFIX: 'staging',
      LOG_LEVEL: 'debug',
      EVENTRELAY_CONFIG: '/etc/eventrelay/config.json',
      EVENTRELAY_CONFIG_MODE: 'sync',
      REDIS_SENTINELS: [
        { host: 'sentinel-0.redis', port: 26379 },
        { host: '10.0.0.7', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      REDIS_SENTINEL_NAME: 'er-primary',
      REDIS_SENTINEL_PASSWORD: 'sentinel-pw',
      REDIS_CLUSTER_NODES: undefined,
      EVENTRELAY_SHARDS: 1,
      EVENTRELAY_CONSUME_SHARDS: 'all',
    });
  });

  it.each([['sentinel'], ['host:'], [':26379'], ['host:0'], ['host:70000'], ['a:1,,b:2'], ['host:26379/x']])(
    'refuses REDIS_SENTINELS=%j naming the variable and the bad item',
    (raw) => {
      const err = loadError(commonEnv, { REDIS_SENTINELS: raw });
      expect(err.message).toContain('REDIS_SENTINELS must be host:port pairs separated by commas, got "');
    },
  );

  it('never echoes REDIS_SENTINEL_PASSWORD in the start-up line', () => {
    const env = loadEnvFrom(commonEnv, { REDIS_SENTINEL_PASSWORD: 'hunter2-sentinel' });
    expect(JSON.stringify(describeEnv(commonEnv, env))).not.toContain('hunter2-sentinel');
  });

  it('takes only seed or sync as EVENTRELAY_CONFIG_MODE, naming the variable', () => {
    expect(loadError(commonEnv, { EVENTRELAY_CONFIG_MODE: 'always' }).message).toContain(
      'EVENTRELAY_CONFIG_MODE must be one of seed, sync, got "always"',
    );
  });

  it('returns a frozen object', () => {
    const env = loadEnvFrom(commonEnv, {});
    expect(Object.isFrozen(env)).toBe(true);
    expect(() => {
      (env as { LOG_LEVEL: string }).LOG_LEVEL = 'trace';
    }).toThrow(TypeError);
    expect(env.LOG_LEVEL).toBe('info');
  });

  it('reads a Redis Cluster and its shards', () => {
    const env = loadEnvFrom(commonEnv, {
      REDIS_CLUSTER_NODES: 'redis-0.redis:6379,10.0.0.8:6380',
      EVENTRELAY_PREFIX: '{er}',
      EVENTRELAY_SHARDS: '12',
      EVENTRELAY_CONSUME_SHARDS: '0-3, 8',
    });
    expect(env.REDIS_CLUSTER_NODES).toEqual([
      { host: 'redis-0.redis', port: 6379 },
      { host: '10.0.0.8', port: 6380 },
    ]);
    expect(env.EVENTRELAY_SHARDS).toBe(12);
    expect(env.EVENTRELAY_CONSUME_SHARDS).toBe('0-3, 8');
  });

  it.each([
    [
      { REDIS_CLUSTER_NODES: 'a:1', REDIS_SENTINELS: 'b:2', EVENTRELAY_PREFIX: '{x}' },
      'REDIS_CLUSTER_NODES and REDIS_SENTINELS cannot both be set',
    ],
    [
      { REDIS_CLUSTER_NODES: 'a:1' },
      'EVENTRELAY_PREFIX must hold a {hash tag} on a Redis Cluster (REDIS_CLUSTER_NODES), such as {eventrelay}, got "eventrelay"',
    ],
    [{ REDIS_CLUSTER_NODES: 'a:1', EVENTRELAY_PREFIX: '{x}', REDIS_URL: 'redis://a:6379/3' }, 'REDIS_URL must name no database but 0'],
    [
      { EVENTRELAY_SHARDS: '4', EVENTRELAY_CONSUME_SHARDS: '2-5' },
      'EVENTRELAY_CONSUME_SHARDS names shard 5, but EVENTRELAY_SHARDS is 4 (shards 0 to 3)',
    ],
    [{ EVENTRELAY_CONSUME_SHARDS: '1' }, 'EVENTRELAY_CONSUME_SHARDS names shard 1, but EVENTRELAY_SHARDS is 1 (shards 0 to 0)'],
    [
      { EVENTRELAY_SHARDS: '3', EVENTRELAY_CONSUME_SHARDS: '2-1' },
      'EVENTRELAY_CONSUME_SHARDS has the range "2-1" that ends before it starts',
    ],
    [
      { EVENTRELAY_CONSUME_SHARDS: 'some' },
      'EVENTRELAY_CONSUME_SHARDS must be all, or shard numbers and ranges such as 0,2,4-7, got "some"',
    ],
    [{ EVENTRELAY_SHARDS: '0' }, 'EVENTRELAY_SHARDS must be between 1 and 256, got 0'],
  ])('refuses %j, naming the variables', (source, message) => {
    expect(loadError(commonEnv, source).message).toContain(message);
  });

  it('ignores variables it does not declare', () => {
    expect(Object.keys(loadEnvFrom(commonEnv, { PATH: '/bin', HOME: '/root' })).sort()).toEqual([
      'EVENTRELAY_CONFIG',
      'EVENTRELAY_CONFIG_MODE',
      'EVENTRELAY_CONSUME_SHARDS',
      'EVENTRELAY_PREFIX',
      'EVENTRELAY_SHARDS',
      'LOG_LEVEL',
      'REDIS_CLUSTER_NODES',
      'REDIS_SENTINELS',
      'REDIS_SENTINEL_NAME',
      'REDIS_SENTINEL_PASSWORD',
      'REDIS_TLS_CA_FILE',
      'REDIS_URL',
    ]);
  });

  it('reports every bad variable by name in one ConfigError', () => {
    const err = loadError(commonEnv, { REDIS_URL: 'http://localhost:6379', EVENTRELAY_PREFIX: 'a:b', LOG_LEVEL: 'loud' });
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.code).toBe('invalid_env');
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/^invalid environment: /);
    expect(err.message).toContain('REDIS_URL must use redis:// or rediss://, got "http:"');
    expect(err.message).toContain('EVENTRELAY_PREFIX must be letters, digits');
    expect(err.message).toContain('"a:b"');
    expect(err.message).toContain('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"');
    expect(err.message).not.toContain('EVENTRELAY_CONFIG');
  });

  describe('EVENTRELAY_PREFIX', () => {
    it.each([['{eventrelay}'], ['eventrelay'], ['{er}-prod'], ['a'], ['team_1.stage-2'], ['x'.repeat(64)]])('accepts %s', (prefix) => {
      expect(loadEnvFrom(commonEnv, { EVENTRELAY_PREFIX: prefix }).EVENTRELAY_PREFIX).toBe(prefix);
    });

    it.each([['a:b'], ['{eventrelay}:x'], ['with space'], ['slash/no'], ['x'.repeat(65)], ['*'], [' eventrelay']])(
      'rejects %j naming the variable',
      (prefix) => {
        const err = loadError(commonEnv, { EVENTRELAY_PREFIX: prefix });
        expect(err.code).toBe('invalid_env');
        expect(err.message).toContain('EVENTRELAY_PREFIX');
      },
    );
  });

  describe('REDIS_TLS_CA_FILE', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-env-'));
      writeFileSync(path.join(dir, 'ca.pem'), '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
      writeFileSync(path.join(dir, 'key.pem'), '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n');
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('takes a readable file holding a certificate', () => {
      const file = path.join(dir, 'ca.pem');
      expect(loadEnvFrom(commonEnv, { REDIS_TLS_CA_FILE: ` ${file} ` }).REDIS_TLS_CA_FILE).toBe(file);
    });

    it.each([
      ['a missing file', () => path.join(dir, 'missing.pem'), 'ENOENT'],
      ['a directory', () => dir, 'must name a file'],
      ['a file without a certificate', () => path.join(dir, 'key.pem'), 'holds no PEM certificate'],
    ])('refuses %s, naming the variable and the path', (_what, file, why) => {
      const message = loadError(commonEnv, { REDIS_TLS_CA_FILE: file() }).message;
      expect(message).toContain(`REDIS_TLS_CA_FILE`);
      expect(message).toContain(file());
      expect(message).toContain(why);
    });
  });

  describe('REDIS_URL', () => {
    it.each([['redis://localhost'], ['rediss://:secret@cache.example.com:6380/1'], ['redis://[::1]:6379']])('accepts %s', (url) => {
      expect(loadEnvFrom(commonEnv, { REDIS_URL: url }).REDIS_URL).toBe(url);
    });

    it.each([['localhost:6379'], ['not a url'], ['https://redis.example.com'], ['unix:///tmp/redis.sock']])(
      'rejects %j naming the variable',
      (url) => {
        expect(loadError(commonEnv, { REDIS_URL: url }).message).toContain('REDIS_URL');
      },
    );
  });
});

describe('variable kinds', () => {
  const spec = {
    WORKERS: integer({ default: 4, min: 1, max: 64, describe: 'workers' }),
    PORT: port({ default: 8080, describe: 'port' }),
    TOKEN: required(text({ secret: true, describe: 'token' })),
    MODE: oneOf(['fast', 'safe'] as const, { default: 'safe', describe: 'mode' }),
    NAME: text({ default: 'anon', pattern: /^[a-z]+$/, describe: 'name' }),
  };

  it('parses integers, with surrounding spaces', () => {
    expect(loadEnvFrom(spec, { TOKEN: 't', WORKERS: ' 12 ', PORT: '0' })).toMatchObject({ WORKERS: 12, PORT: 0 });
    expect(loadEnvFrom(spec, { TOKEN: 't', WORKERS: '64', PORT: '65535' })).toMatchObject({ WORKERS: 64, PORT: 65535 });
  });

  it.each([
    ['WORKERS', '0', 'WORKERS must be between 1 and 64, got 0'],
    ['WORKERS', '65', 'WORKERS must be between 1 and 64, got 65'],
    ['WORKERS', '2.5', 'WORKERS must be a whole number, got "2.5"'],
    ['WORKERS', '1e3', 'WORKERS must be a whole number, got "1e3"'],
    ['WORKERS', 'four', 'WORKERS must be a whole number, got "four"'],
    ['PORT', '65536', 'PORT must be between 0 and 65535, got 65536'],
    ['PORT', '-1', 'PORT must be between 0 and 65535, got -1'],
    ['MODE', 'FAST', 'MODE must be one of fast, safe, got "FAST"'],
    ['NAME', 'Bob', 'NAME must be of the form /^[a-z]+$/, got "Bob"'],
  ])('%s=%j is refused: %s', (name, raw, message) => {
    expect(loadError(spec, { TOKEN: 't', [name]: raw }).message).toBe(`invalid environment: ${message}`);
  });

  it('refuses a missing required variable by name', () => {
    expect(loadError(spec, {}).message).toBe('invalid environment: TOKEN is required');
    expect(loadError(spec, { TOKEN: '   ' }).message).toBe('invalid environment: TOKEN is required');
  });

  it('lists several problems in declaration order, separated by "; "', () => {
    expect(loadError(spec, { WORKERS: 'x', PORT: '99999', MODE: 'y' }).message).toBe(
      'invalid environment: WORKERS must be a whole number, got "x"; PORT must be between 0 and 65535, got 99999; TOKEN is required; MODE must be one of fast, safe, got "y"',
    );
  });

  it('lets an unexpected error through instead of reporting it as a bad value', () => {
    const boom = new Error('defect');
    const broken = {
      X: {
        describe: 'x',
        doc: { type: 'text', required: false },
        parse: () => {
          throw boom;
        },
      },
    };
    expect(() => loadEnvFrom(broken, {})).toThrow(boom);
  });
});

describe('describeEnv', () => {
  const spec = {
    ...commonEnv,
    ADMIN_TOKEN: text({ secret: true, describe: 'admin token' }),
    WEBHOOK_SECRET: required(text({ secret: true, describe: 'secret' })),
    PORT: port({ default: 8080, describe: 'port' }),
  };

  it('shows plain values as they are and masks secrets', () => {
    const env = loadEnvFrom(spec, { ADMIN_TOKEN: 'adm-123456', WEBHOOK_SECRET: 'whsec_abc', PORT: '9000', EVENTRELAY_PREFIX: '{er}' });
    expect(describeEnv(spec, env)).toEqual({
      REDIS_URL: 'redis://127.0.0.1:6379',
      EVENTRELAY_PREFIX: '{er}',
      LOG_LEVEL: 'info',
      EVENTRELAY_CONFIG: undefined,
      EVENTRELAY_CONFIG_MODE: 'seed',
      REDIS_SENTINEL_NAME: 'eventrelay',
      EVENTRELAY_SHARDS: 1,
      EVENTRELAY_CONSUME_SHARDS: 'all',
      ADMIN_TOKEN: '***',
      WEBHOOK_SECRET: '***',
      PORT: 9000,
    });
  });

  it('leaves an unset secret unset rather than pretending it has a value', () => {
    const env = loadEnvFrom(spec, { WEBHOOK_SECRET: 'x' });
    expect(describeEnv(spec, env)['ADMIN_TOKEN']).toBeUndefined();
  });

  it.each([
    ['redis://user:s3cret@redis.internal:6379/0', 'redis://user:***@redis.internal:6379/0'],
    ['redis://:s3cret@redis.internal:6379', 'redis://:***@redis.internal:6379'],
    ['rediss://default:p%40ss%3Aword@cache.example.com:6380', 'rediss://default:***@cache.example.com:6380'],
    ['redis://redis.internal:6379', 'redis://redis.internal:6379'],
  ])('masks the password of REDIS_URL %s', (url, shown) => {
    const env = loadEnvFrom(spec, { REDIS_URL: url, WEBHOOK_SECRET: 'x' });
    const described = describeEnv(spec, env)['REDIS_URL'];
    expect(described).toBe(shown);
    expect(String(described)).not.toContain('s3cret');
    expect(String(described)).not.toContain('p%40ss');
  });

  // ioredis (packages/runtime/src/redis.ts passes REDIS_URL to it as is) takes the query parameter
  // `password` as the password, so it is as secret as the one in the userinfo.
  it('masks a password given as a query parameter of REDIS_URL', () => {
    const env = loadEnvFrom(spec, { REDIS_URL: 'redis://redis.internal:6379/0?password=s3cret', WEBHOOK_SECRET: 'x' });
    expect(String(describeEnv(spec, env)['REDIS_URL'])).not.toContain('s3cret');
  });

  it('does not change the env it describes', () => {
    const env = loadEnvFrom(spec, { REDIS_URL: 'redis://u:pw@h:1', WEBHOOK_SECRET: 'x' });
    describeEnv(spec, env);
    expect(env.REDIS_URL).toBe('redis://u:pw@h:1');
    expect(env.WEBHOOK_SECRET).toBe('x');
  });
});
