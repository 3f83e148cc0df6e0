/**
 * Redis credentials and TLS against real processes: every compiled service connects to a private
 * redis-server that requires a password (the default user's, and an ACL user held to the
 * least-privilege rules docs/deployment.md gives), or that speaks TLS only with a test CA, and the
 * pipeline delivers a signed call end to end. Without the password, with a wrong one, or without the
 * CA, each service exits non-zero at start naming the variable, and never prints the password.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import {
  buildServices,
  eventually,
  runServiceToExit,
  startPrivateRedis,
  startReceiver,
  startStack,
  uniquePrefix,
  type PrivateRedis,
  type Receiver,
  type ServiceName,
} from '@eventrelay/testkit';
import { makeCertificates, type TestCertificates } from '../support/certs';

const PASSWORD = 'default-pw-3f9c1e7a';
const ACL_PASSWORD = 'acl-pw-7b2d4c9e';
const SECRET = 'redis-auth-secret';
const WRITE_KEY = 'wk_redis_auth_0001';
const SERVICES: readonly ServiceName[] = ['ingest', 'router', 'webhook-delivery', 'audiences', 'admin'];

/** The least-privilege ACL of docs/deployment.md for `prefix`, as redis-server arguments after the user name. */
function eventrelayAcl(prefix: string): string[] {
  return [
    'on',
    `>${ACL_PASSWORD}`,
    'resetkeys',
    `~${prefix}:*`,
    'resetchannels',
    '-@all',
    '+@read',
    '+@write',
    '+@scripting',
    '+@transaction',
    '+@connection',
    '-@dangerous',
    '+info',
    '-function',
    '-script|flush',
    '-script|kill',
  ];
}

let dir: string;
let receiver: Receiver;
let configFile: string;

beforeAll(async () => {
  buildServices();
  dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-redis-auth-'));
  receiver = await startReceiver({ secret: SECRET });
  configFile = path.join(dir, 'eventrelay.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      sources: [{ id: 'src-auth', name: 'Auth', type: 'server', writeKey: WRITE_KEY }],
      destinations: [
        {
          id: 'dst-auth',
          name: 'Webhooks',
          enabled: true,
          sourceIds: ['src-auth'],
          settings: { webhooks: [{ url: receiver.url }], sharedSecret: SECRET },
        },
      ],
      audiences: [],
    }),
  );
}, 240_000);

afterAll(async () => {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts every service on `redisUrl`, sends one call through ingest, and waits for its signed delivery. */
async function deliverEndToEnd(redisUrl: string, prefix: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  // The webhook body carries the event name, not the messageId.
  const event = `Redis Auth Tested ${prefix}`;
  const stack = await startStack({ redisUrl, prefix, configFile, logLevel: 'info', env });
  try {
    expect(
      stack
        .processes()
        .map((p) => p.service)
        .sort(),
    ).toEqual([...SERVICES].sort());
    const res = await fetch(`${stack.url('ingest')}/v1/track`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}` },
      body: JSON.stringify({ userId: 'u-auth', event, messageId: `auth-${prefix}` }),
    });
    expect(res.status).toBe(200);
    const delivered = await eventually(() => {
      const found = receiver.requests.find((r) => r.body.toString('utf8').includes(event));
      if (!found) throw new Error(`${event} not delivered yet`);
      return found;
    }, 20_000);
    expect(delivered.signatureValid).toBe(true);
    return stack
      .processes()
      .map((p) => p.output())
      .join('\n');
  } finally {
    await stack.stop();
  }
}

describe('a Redis that requires a password', () => {
  let redis: PrivateRedis;
  const aclPrefix = uniquePrefix('acl');
  const withPassword = (pw: string, user = '') => redis.url.replace('redis://', `redis://${user}:${encodeURIComponent(pw)}@`);

  beforeAll(async () => {
    redis = await startPrivateRedis({
      aof: false,
      args: ['--requirepass', PASSWORD, '--user', 'eventrelay', ...eventrelayAcl(aclPrefix)],
    });
  });
  afterAll(() => redis.close());

  it('every service starts with the password in REDIS_URL, the pipeline delivers, and no log line shows the password', async () => {
    const output = await deliverEndToEnd(withPassword(PASSWORD), uniquePrefix('auth'));
    expect(output).toContain('"REDIS_URL":"redis://:***@127.0.0.1');
    expect(output).not.toContain(PASSWORD);
  }, 90_000);

  it('an ACL user held to the documented least-privilege rules runs the whole pipeline, with no command or key refused', async () => {
    const admin = new Redis(withPassword(PASSWORD), { maxRetriesPerRequest: 1 });
    try {
      await admin.acl('LOG', 'RESET');
      const output = await deliverEndToEnd(withPassword(ACL_PASSWORD, 'eventrelay'), aclPrefix);
      expect(output).not.toContain(ACL_PASSWORD);
      expect(output).not.toMatch(/NOPERM/);
      expect(await admin.acl('LOG')).toEqual([]);
      // The rules do bite: a key outside the prefix and a dangerous command are refused.
      const user = new Redis(withPassword(ACL_PASSWORD, 'eventrelay'), { maxRetriesPerRequest: 1 });
      try {
        await expect(user.set('outside-the-prefix', '1')).rejects.toThrow(/NOPERM/);
        await expect(user.flushall()).rejects.toThrow(/NOPERM/);
        await expect(user.set(`${aclPrefix}:inside`, '1')).resolves.toBe('OK');
      } finally {
        user.disconnect();
      }
    } finally {
      admin.disconnect();
    }
  }, 90_000);

  const cases = SERVICES.flatMap((service) => [
    { service, what: 'without a password', url: () => redis.url, says: /REDIS_URL: Redis requires a password and REDIS_URL has none/ },
    {
      service,
      what: 'with a wrong password',
      url: () => withPassword('not-the-password'),
      says: /REDIS_URL: Redis refused its user and password/,
    },
  ]);
  it.each(cases)(
    '$service exits non-zero at once $what, naming REDIS_URL',
    async ({ service, url, says }) => {
      const started = Date.now();
      const exit = await runServiceToExit(service, {
        REDIS_URL: url(),
        EVENTRELAY_PREFIX: uniquePrefix('noauth'),
        ADMIN_TOKEN: 'redis-auth-admin-token-0123456789',
      });
      expect(exit.code).not.toBe(0);
      expect(exit.code).not.toBeNull();
      expect(exit.output).toMatch(says);
      expect(exit.output).not.toContain('not-the-password');
      // At once: not after the 30 s start-up wait for a Redis that is away.
      expect(Date.now() - started).toBeLessThan(10_000);
    },
    20_000,
  );
});

describe('a Redis that speaks TLS only, with a certificate from a private CA', () => {
  let certs: TestCertificates;
  let redis: PrivateRedis;

  beforeAll(async () => {
    certs = makeCertificates();
    const at = (name: string, content: string) => {
      const file = path.join(dir, name);
      writeFileSync(file, content, { mode: 0o600 });
      return file;
    };
    redis = await startPrivateRedis({
      aof: false,
      tls: { certFile: at('redis.crt', certs.caSigned.cert), keyFile: at('redis.key', certs.caSigned.key), caFile: certs.caFile },
      args: ['--requirepass', PASSWORD],
    });
  });
  afterAll(async () => {
    await redis.close();
    certs.cleanup();
  });

  it('every service connects over rediss:// with REDIS_TLS_CA_FILE, and the pipeline delivers', async () => {
    expect(redis.url).toMatch(/^rediss:\/\/127\.0\.0\.1:\d+$/);
    const url = redis.url.replace('rediss://', `rediss://:${PASSWORD}@`);
    const output = await deliverEndToEnd(url, uniquePrefix('tls'), { REDIS_TLS_CA_FILE: certs.caFile });
    expect(output).not.toContain(PASSWORD);
  }, 90_000);

  it.each(['ingest', 'router'] as const)(
    '%s refuses to start without the CA, naming REDIS_TLS_CA_FILE',
    async (service) => {
      const exit = await runServiceToExit(service, {
        REDIS_URL: redis.url.replace('rediss://', `rediss://:${PASSWORD}@`),
        EVENTRELAY_PREFIX: uniquePrefix('noca'),
      });
      expect(exit.code).not.toBe(0);
      expect(exit.output).toMatch(/REDIS_URL: the TLS certificate of Redis did not verify .*REDIS_TLS_CA_FILE/);
    },
    20_000,
  );

  it('a service refuses to start when REDIS_TLS_CA_FILE names no readable file', async () => {
    const missing = path.join(dir, 'no-such-ca.pem');
    const exit = await runServiceToExit('router', { REDIS_URL: redis.url, REDIS_TLS_CA_FILE: missing, EVENTRELAY_PREFIX: 'x' });
    expect(exit.code).not.toBe(0);
    expect(exit.output).toContain(`REDIS_TLS_CA_FILE cannot read "${missing}": ENOENT`);
  }, 20_000);
});
