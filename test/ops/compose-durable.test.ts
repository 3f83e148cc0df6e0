/**
 * docker-compose.durable.yml merged over docker-compose.yml, as
 * `docker compose -f docker-compose.yml -f docker-compose.durable.yml` reads them: two Redis
 * replicas and three Sentinels that publish nothing, have no default secret and no password in a
 * command line, on the primary's exact image; every eventrelay process finds the primary through
 * the Sentinels, and ingest runs durable mode. The start scripts themselves run for real in
 * durable-redis.test.ts.
 */
import path from 'node:path';
import { renderKustomization } from '../support/kustomize';
import { Rendered, redisBytes, splitImage, type Container, type Workload } from './k8s-objects';
import { REPO_ROOT as ROOT } from './promql-names';
import {
  expectOverrideNeedsPassword,
  NAMES,
  info,
  loadFor,
  loadCompose,
  composeEnv,
  namedVolumes,
  publishedPorts,
  isExactImage,
  stdinConfig,
  COMPOSE_VARS,
  TEST_REDIS_PASSWORD,
  type ComposeService,
} from './deployment';

const FILES = ['docker-compose.yml', 'docker-compose.durable.yml'];
const REDIS = ['redis', 'redis-replica-1', 'redis-replica-2'];
const SENTINELS = ['redis-sentinel-1', 'redis-sentinel-2', 'redis-sentinel-3'];

const compose = loadCompose(COMPOSE_VARS, FILES);
const service = (name: string) => {
  const s = compose.services[name];
  if (!s) throw new Error(`no service ${name}`);
  return s;
};
const envOf = (name: string) => composeEnv(service(name), `services.${name}`);
const commandOf = (name: string) => {
  const command = service(name).command;
  if (!Array.isArray(command) || command[0] !== 'sh' || command[1] !== '-c') throw new Error(`${name}: expected sh -c <script>`);
  return command;
};
const scriptOf = (name: string) => commandOf(name)[2] as string;
/** The lines the Sentinel script writes to its config file (printf '%s\n' 'line' "line" … >file), unexpanded. */
const sentinelConfigLines = (script: string) => {
  const m = /printf '%s\\n' \\\n([\s\S]*?)\n\s*>(\S+)\n/.exec(script);
  if (!m) throw new Error(`no printf of the config in:\n${script}`);
  const lines = [...(m[1] as string).matchAll(/^\s*(['"])(.*)\1 \\$/gm)].map((x) => x[2] as string);
  return { lines, file: m[2] as string };
};

describe('docker-compose.durable.yml over docker-compose.yml', () => {
  it('adds two Redis replicas and three Sentinels, on the exact image of the primary, and nothing else that runs Redis', () => {
    const primaryImage = loadCompose().services['redis']?.image as string;
    expect(isExactImage(primaryImage)).toBe(true);
    const runningRedis = Object.entries(compose.services)
      .filter(([, s]) => splitImage(s.image ?? '').name === 'redis')
      .map(([name]) => name);
    expect(runningRedis.sort()).toEqual([...REDIS, ...SENTINELS].sort());
    for (const name of runningRedis) expect({ service: name, image: service(name).image }).toEqual({ service: name, image: primaryImage });
    // Every image not built here is an exact version.
    for (const [name, s] of Object.entries(compose.services))
      if (!s.build) expect({ service: name, exact: isExactImage(s.image ?? '') }).toEqual({ service: name, exact: true });
  });

  it('publishes no port of any Redis or Sentinel, and no service publishes 6379 or 26379', () => {
    for (const name of [...REDIS, ...SENTINELS])
      expect({ service: name, ports: service(name).ports ?? [] }).toEqual({ service: name, ports: [] });
    for (const [name, s] of Object.entries(compose.services))
      expect({ service: name, redis: publishedPorts(s).filter(([, target]) => target === 6379 || target === 26379) }).toEqual({
        service: name,
        redis: [],
      });
    // What the base publishes, the override leaves as it was.
    const base = loadCompose();
    for (const [name, s] of Object.entries(base.services))
      expect({ service: name, ports: service(name).ports }).toEqual({ service: name, ports: s.ports });
  });

  it('has no default secret, and refuses to start without REDIS_PASSWORD', () => {
    expectOverrideNeedsPassword('docker-compose.durable.yml');
  });

  it('puts the password in no command line or health check: Redis reads it on stdin, Sentinel from a file it writes', () => {
    for (const [name, s] of Object.entries(compose.services)) {
      expect({ service: name, inCommand: JSON.stringify(s.command ?? []).includes(TEST_REDIS_PASSWORD) }).toEqual({
        service: name,
        inCommand: false,
      });
      expect({ service: name, inHealthcheck: JSON.stringify(s.healthcheck ?? {}).includes(TEST_REDIS_PASSWORD) }).toEqual({
        service: name,
        inHealthcheck: false,
      });
      // Nor a password option of redis-server or redis-cli anywhere in a command.
      expect({ service: name, options: JSON.stringify(s.command ?? []).match(/--(requirepass|masterauth)|redis-cli[^"]* -a /g) }).toEqual({
        service: name,
        options: null,
      });
    }
    for (const name of REDIS) {
      expect(stdinConfig(scriptOf(name))).toEqual([
        'requirepass $REDIS_PASSWORD',
        // any of them may be a replica after a failover
        'masterauth $REDIS_PASSWORD',
        'replica-announce-ip $REDIS_SELF',
        '$role',
      ]);
      expect(envOf(name)['REDIS_PASSWORD']).toBe(TEST_REDIS_PASSWORD);
    }
    for (const name of SENTINELS) {
      // printf is a shell builtin: its arguments are no process's command line.
      const { lines } = sentinelConfigLines(scriptOf(name));
      expect(lines).toEqual(expect.arrayContaining(['requirepass $REDIS_PASSWORD', 'sentinel auth-pass eventrelay $REDIS_PASSWORD']));
      expect(scriptOf(name)).toMatch(/^umask 077$/m);
      expect(envOf(name)['REDIS_PASSWORD']).toBe(TEST_REDIS_PASSWORD);
    }
  });

  it('checks the health of every Redis and Sentinel authenticated: PONG and in sync, a Sentinel that sees a quorum', () => {
    for (const name of [...REDIS, ...SENTINELS])
      expect({ service: name, auth: envOf(name)['REDISCLI_AUTH'] }).toEqual({ service: name, auth: TEST_REDIS_PASSWORD });
    for (const name of REDIS) {
      const test = JSON.stringify(service(name).healthcheck?.test);
      expect(test).toMatch(
        /redis-cli ping \| grep -qx PONG && redis-cli info replication \| grep -qE '\^\(role:master\|master_link_status:up\)'/,
      );
    }
    for (const name of SENTINELS)
      expect(JSON.stringify(service(name).healthcheck?.test)).toMatch(/redis-cli -p 26379 sentinel ckquorum eventrelay \| grep -q '\^OK'/);
  });

  it('runs every Redis with AOF fsynced every second, noeviction and a maxmemory, on a named volume of its own at /data', () => {
    const volumes = new Set<string>();
    for (const name of REDIS) {
      const command = commandOf(name);
      expect(command[3]).toBe('redis-server');
      const args = command.slice(4);
      const setting = (key: string) => args[args.indexOf(`--${key}`) + 1];
      expect({
        service: name,
        appendonly: setting('appendonly'),
        fsync: setting('appendfsync'),
        policy: setting('maxmemory-policy'),
        maxmemory: redisBytes(setting('maxmemory') ?? ''),
      }).toEqual({
        service: name,
        appendonly: 'yes',
        fsync: 'everysec',
        policy: 'noeviction',
        maxmemory: 768 * 1024 * 1024,
      });
      const data = (service(name).volumes ?? []).filter((v) => typeof v === 'string' && v.endsWith(':/data'));
      expect(data).toHaveLength(1);
      const [volume] = namedVolumes({ volumes: data });
      expect(Object.keys(compose.volumes ?? {})).toContain(volume);
      volumes.add(volume as string);
    }
    expect(volumes.size).toBe(REDIS.length);
    // The primary keeps the base's volume: an existing install's data is where it was.
    expect(namedVolumes(service('redis'))).toEqual(namedVolumes(loadCompose().services['redis'] as ComposeService));
  });

  it('gives each Redis and Sentinel its compose name to announce and the names of the others; "redis" is the first primary', () => {
    for (const name of REDIS) {
      const env = envOf(name);
      expect({ service: name, self: env['REDIS_SELF'], first: env['REDIS_INITIAL_PRIMARY'] }).toEqual({
        service: name,
        self: name,
        first: 'redis',
      });
      expect(env['SENTINEL_HOSTS']?.split(' ')).toEqual(SENTINELS);
    }
    for (const name of SENTINELS) {
      const env = envOf(name);
      expect({ service: name, self: env['SENTINEL_SELF'], first: env['REDIS_INITIAL_PRIMARY'] }).toEqual({
        service: name,
        self: name,
        first: 'redis',
      });
      expect(env['SENTINEL_HOSTS']?.split(' ')).toEqual(SENTINELS);
      expect(env['REDIS_HOSTS']?.split(' ')).toEqual(REDIS);
      const { lines } = sentinelConfigLines(scriptOf(name));
      // Compose service names, resolved and announced as names (container IPs change).
      expect(lines).toEqual(
        expect.arrayContaining([
          'port 26379',
          'sentinel resolve-hostnames yes',
          'sentinel announce-hostnames yes',
          'sentinel announce-ip $SENTINEL_SELF',
        ]),
      );
      // Quorum 2 of the 3; the primary down after 5 s without an answer.
      expect(lines).toEqual(
        expect.arrayContaining(['sentinel monitor eventrelay $primary 2', 'sentinel down-after-milliseconds eventrelay 5000']),
      );
    }
    // Replicas start once the primary's container does; Sentinels once it answers.
    for (const name of REDIS.slice(1))
      expect((service(name).depends_on as Record<string, unknown>)['redis']).toEqual({ condition: 'service_started' });
    for (const name of SENTINELS)
      expect((service(name).depends_on as Record<string, unknown>)['redis']).toEqual({ condition: 'service_healthy' });
  });

  it('runs each Sentinel as a non-root user on a read-only root, with its config in a tmpfs of its own', () => {
    for (const name of SENTINELS) {
      const s = service(name);
      const { file } = sentinelConfigLines(scriptOf(name));
      const dir = path.posix.dirname(file);
      expect({ service: name, tmpfs: s.tmpfs, readOnly: s.read_only, capDrop: s.cap_drop }).toEqual({
        service: name,
        tmpfs: [dir],
        readOnly: true,
        capDrop: ['ALL'],
      });
      expect(sentinelConfigLines(scriptOf(name)).lines).toContain(`dir ${dir}`);
      expect(scriptOf(name).trimEnd().split('\n').pop()).toBe(`exec redis-server ${file} --sentinel "$@"`);
      expect(Number(s.user?.split(':')[0])).toBeGreaterThan(0);
    }
    // The replicas, new volumes, run as the image's redis user too.
    for (const name of REDIS.slice(1)) expect(Number(service(name).user?.split(':')[0])).toBeGreaterThan(0);
  });

  it('gives every eventrelay process the Sentinels and their password, and ingest durable mode; each environment loads', () => {
    const monitored = /^sentinel monitor (\S+) /m.exec(sentinelConfigLines(scriptOf('redis-sentinel-1')).lines.join('\n'))?.[1];
    for (const name of NAMES) {
      const env = envOf(name);
      const unknown = Object.keys(env).filter((k) => !(k in info(name).spec));
      expect({ service: name, unknown }).toEqual({ service: name, unknown: [] });
      const loaded = loadFor(name, env);
      expect({ service: name, sentinels: loaded['REDIS_SENTINELS'] }).toEqual({
        service: name,
        sentinels: SENTINELS.map((host) => ({ host, port: 26379 })),
      });
      expect({ service: name, monitored: loaded['REDIS_SENTINEL_NAME'] }).toEqual({ service: name, monitored });
      expect({ service: name, password: loaded['REDIS_SENTINEL_PASSWORD'] }).toEqual({ service: name, password: TEST_REDIS_PASSWORD });
      expect({ service: name, durable: loaded['INGEST_DURABLE_REPLICAS'] }).toEqual({
        service: name,
        durable: name === 'ingest' ? 1 : undefined,
      });
      // Started once every Sentinel sees a quorum (and, from the base, once redis is healthy).
      const dependsOn = service(name).depends_on as Record<string, { condition?: string }>;
      for (const sentinel of SENTINELS) expect(dependsOn[sentinel]).toEqual({ condition: 'service_healthy' });
      expect(dependsOn['redis']).toEqual({ condition: 'service_healthy' });
    }
  });

  it('starts Redis and Sentinel with the same scripts as k8s/overlays/durable', () => {
    const k8s = new Rendered(renderKustomization(path.join(ROOT, 'k8s/overlays/durable')));
    const pod = k8s.one<Workload>('StatefulSet', 'eventrelay-redis').spec.template.spec.containers;
    const script = (c: Container | undefined) => c?.command?.[2];
    expect(scriptOf('redis')).toBe(script(pod.find((c) => c.name === 'redis')));
    expect(scriptOf('redis-sentinel-1')).toBe(script(pod.find((c) => c.name === 'sentinel')));
    for (const name of REDIS) expect(scriptOf(name)).toBe(scriptOf('redis'));
    for (const name of SENTINELS) expect(scriptOf(name)).toBe(scriptOf('redis-sentinel-1'));
  });
});
