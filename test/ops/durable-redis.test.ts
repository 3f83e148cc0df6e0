/**
 * The start scripts of durable mode's Redis and Sentinels, run for real: k8s/overlays/durable's
 * (docker-compose.durable.yml has the same, compose-durable.test.ts checks). Three redis-server and
 * three Sentinels from PATH, each on a loopback address of its own (127.a.b.2 to .7, a random
 * a.b per run) with the deployments' fixed ports 6379 and 26379, the addresses standing in for the
 * pods' DNS names; only where files go and what the servers bind to is changed.
 *
 * Checked: the Sentinels accept the config the script writes and agree on pod 0 as the first
 * primary; the replicas sync with the password (masterauth) and announce their names; after the
 * primary is SIGKILLed and a replica promoted, the old primary started again asks the Sentinels and
 * comes back as a replica of the new primary, never as a second primary; and Sentinels all started
 * afresh find the current primary (from the Redis servers, since no other Sentinel answers) and know
 * each other again by the same ids.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { eventually, spawnChild, type ChildHandle } from '@eventrelay/testkit';
import { renderKustomization } from '../support/kustomize';
import { Rendered, expandK8s, type Container, type Workload } from './k8s-objects';
import { REPO_ROOT as ROOT } from './promql-names';

const REDIS_PORT = 6379;
const SENTINEL_PORT = 26379;
const NAME = 'eventrelay';
const PASSWORD = randomBytes(16).toString('hex');

const pod = new Rendered(renderKustomization(path.join(ROOT, 'k8s/overlays/durable'))).one<Workload>('StatefulSet', 'eventrelay-redis').spec
  .template.spec;
const redisContainer = pod.containers.find((c) => c.name === 'redis') as Container;
const sentinelContainer = pod.containers.find((c) => c.name === 'sentinel') as Container;
const SENTINEL_DIR = '/run/sentinel';

let dir: string;
let hosts: { redis: string[]; sentinels: string[] };
const redisProcs = new Map<string, ChildHandle>();
const sentinelProcs = new Map<string, ChildHandle>();
const clients: Redis[] = [];

/** Whether something can listen on host:port now. */
function free(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

function client(host: string, port: number): Redis {
  const c = new Redis({ host, port, password: PASSWORD, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  c.on('error', () => undefined);
  clients.push(c);
  return c;
}

async function ask(host: string, port: number, ...args: string[]): Promise<unknown> {
  const c = client(host, port);
  try {
    await c.connect();
    return await c.call(args[0] as string, ...args.slice(1));
  } finally {
    c.disconnect();
  }
}

/** The first reply to an inline command sent without authenticating. */
function unauthenticated(host: string, port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port }, () => socket.write(`${command}\r\n`));
    socket.setTimeout(3000, () => socket.destroy(new Error('no answer')));
    socket.once('error', reject);
    socket.once('data', (d: Buffer) => {
      socket.destroy();
      resolve(d.toString());
    });
  });
}

const primaryOf = async (sentinel: string) =>
  ((await ask(sentinel, SENTINEL_PORT, 'SENTINEL', 'get-master-addr-by-name', NAME)) as string[])[0];
const replication = async (host: string) => (await ask(host, REDIS_PORT, 'INFO', 'replication')) as string;

/** The env a container's script sees (its env entries, fieldRef-free ones) with the test's names. */
const scriptEnv = (extra: Record<string, string>) => ({
  REDIS_PASSWORD: PASSWORD,
  REDISCLI_AUTH: PASSWORD,
  SENTINEL_HOSTS: hosts.sentinels.join(' '),
  REDIS_HOSTS: hosts.redis.join(' '),
  REDIS_INITIAL_PRIMARY: hosts.redis[0] as string,
  ...extra,
});

function startRedis(host: string): ChildHandle {
  const data = path.join(dir, `redis-${host}`);
  mkdirSync(data, { recursive: true });
  const env: Record<string, string> = { REDIS_MAXMEMORY: '64mb' };
  // The container's own redis-server arguments, with its folder here instead of the volume's /data.
  const args = (redisContainer.args ?? []).map((a) => expandK8s(a, env));
  args[args.indexOf('--dir') + 1] = data;
  const handle = spawnChild({
    name: `redis ${host}`,
    command: 'sh',
    args: ['-c', redisContainer.command?.[2] as string, 'redis-server', ...args, '--bind', host, '--logfile', path.join(data, 'redis.log')],
    env: scriptEnv({ REDIS_SELF: host }),
    cwd: data,
  });
  redisProcs.set(host, handle);
  return handle;
}

function startSentinel(host: string): ChildHandle {
  const own = path.join(dir, `sentinel-${host}`);
  mkdirSync(own, { recursive: true });
  const script = sentinelContainer.command?.[2] as string;
  expect(script).toContain(SENTINEL_DIR);
  const handle = spawnChild({
    name: `sentinel ${host}`,
    command: 'sh',
    args: ['-c', script.replaceAll(SENTINEL_DIR, own), 'sentinel', '--bind', host, '--logfile', path.join(own, 'sentinel.log')],
    env: scriptEnv({ SENTINEL_SELF: host }),
    cwd: own,
  });
  sentinelProcs.set(host, handle);
  return handle;
}

async function allAgree(primary: string): Promise<void> {
  for (const s of hosts.sentinels) expect({ sentinel: s, primary: await primaryOf(s) }).toEqual({ sentinel: s, primary });
  for (const s of hosts.sentinels) expect(String(await ask(s, SENTINEL_PORT, 'SENTINEL', 'ckquorum', NAME))).toMatch(/^OK/);
}

async function replicates(host: string, primary: string): Promise<void> {
  const info = await replication(host);
  expect({
    host,
    role: /role:(\w+)/.exec(info)?.[1],
    of: /master_host:(\S+)/.exec(info)?.[1],
    link: /master_link_status:(\w+)/.exec(info)?.[1],
  }).toEqual({
    host,
    role: 'slave',
    of: primary,
    link: 'up',
  });
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-durable-redis-'));
  for (let attempt = 0; ; attempt++) {
    const net24 = `127.${randomInt(1, 255)}.${randomInt(0, 255)}`;
    const candidate = { redis: [2, 3, 4].map((i) => `${net24}.${i}`), sentinels: [5, 6, 7].map((i) => `${net24}.${i}`) };
    const ok = await Promise.all([
      ...candidate.redis.map((h) => free(h, REDIS_PORT)),
      ...candidate.sentinels.map((h) => free(h, SENTINEL_PORT)),
    ]);
    if (ok.every(Boolean)) {
      hosts = candidate;
      break;
    }
    if (attempt === 5) throw new Error('no free loopback addresses for 6379 and 26379');
  }
}, 30_000);

afterAll(async () => {
  for (const c of clients) if (c.status !== 'end') c.disconnect();
  await Promise.all([...sentinelProcs.values(), ...redisProcs.values()].map((h) => h.stop('SIGTERM', 5000)));
  if (!process.env['KEEP_DURABLE_REDIS']) rmSync(dir, { recursive: true, force: true });
  else console.log(dir);
}, 30_000);

describe('durable Redis start scripts (k8s/overlays/durable, docker-compose.durable.yml)', () => {
  const [first, second, third] = [0, 1, 2];

  it('start a primary, two replicas in sync with the password, and three Sentinels that agree on it', async () => {
    for (const h of hosts.redis) startRedis(h);
    const primary = hosts.redis[first] as string;
    await eventually(
      async () => {
        for (const h of hosts.redis.slice(1)) await replicates(h, primary);
      },
      20_000,
      200,
    );
    // The replicas announce the names they were given (replica-announce-ip).
    const info = await replication(primary);
    for (const h of hosts.redis.slice(1))
      expect(info).toMatch(new RegExp(`slave\\d+:ip=${h.replaceAll('.', '\\.')},port=${REDIS_PORT},state=online`));
    // What durable mode waits for: a write confirmed by the replicas.
    const c = client(primary, REDIS_PORT);
    await c.connect();
    await c.set('durable-redis-test', '1');
    expect(await c.call('WAIT', '2', '2000')).toBe(2);
    c.disconnect();

    for (const h of hosts.sentinels) startSentinel(h);
    await eventually(() => allAgree(primary), 20_000, 200);
    for (const s of hosts.sentinels) {
      const replicas = (await ask(s, SENTINEL_PORT, 'SENTINEL', 'replicas', NAME)) as string[][];
      expect(replicas.map((fields) => fields[fields.indexOf('ip') + 1]).sort()).toEqual(hosts.redis.slice(1).sort());
    }
    // A Sentinel requires the password too.
    expect(await unauthenticated(hosts.sentinels[0] as string, SENTINEL_PORT, 'SENTINEL get-master-addr-by-name eventrelay')).toMatch(
      /^-NOAUTH/,
    );
  }, 60_000);

  it('bring the old primary back as a replica of the promoted one after a failover', async () => {
    // With the deployments' timings: down after 5 s. (At 1 s, as tight as Sentinel's own ping
    // period, a loaded machine saw the promoted replica taken for down too, and a second failover.)
    const old = hosts.redis[first] as string;
    await redisProcs.get(old)?.stop('SIGKILL');
    const promoted = await eventually(
      async () => {
        const p = await primaryOf(hosts.sentinels[0] as string);
        expect([hosts.redis[second], hosts.redis[third]]).toContain(p);
        await allAgree(p as string);
        return p as string;
      },
      30_000,
      200,
    );
    const other = hosts.redis.find((h) => h !== old && h !== promoted) as string;
    await eventually(() => replicates(other, promoted), 20_000, 200);

    startRedis(old);
    // From its first answer it is a replica of the promoted primary: it asked the Sentinels.
    const info = await eventually(() => replication(old), 10_000, 50);
    expect({ role: /role:(\w+)/.exec(info)?.[1], of: /master_host:(\S+)/.exec(info)?.[1] }).toEqual({ role: 'slave', of: promoted });
    await eventually(() => replicates(old, promoted), 20_000, 200);
  }, 90_000);

  it('let Sentinels that all start afresh find the current primary and know each other again', async () => {
    const current = await primaryOf(hosts.sentinels[0] as string);
    expect(current).not.toBe(hosts.redis[first]);
    await Promise.all([...sentinelProcs.values()].map((h) => h.stop('SIGKILL')));
    for (const h of hosts.sentinels) startSentinel(h);
    await eventually(() => allAgree(current as string), 30_000, 200);
    // The same myid at each start: two known Sentinels each, not stale ones beside the new. They
    // announce themselves every 2 s, so agreeing on the primary can come before knowing each other;
    // a stale entry would stay beside the new one and never let the count settle at 2.
    await eventually(
      async () => {
        for (const s of hosts.sentinels) expect(((await ask(s, SENTINEL_PORT, 'SENTINEL', 'sentinels', NAME)) as unknown[]).length).toBe(2);
      },
      15_000,
      200,
    );
  }, 60_000);
});
