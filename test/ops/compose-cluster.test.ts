/**
 * docker-compose.cluster.yml merged over docker-compose.yml, as
 * `docker compose -f docker-compose.yml -f docker-compose.cluster.yml` reads them: six Redis
 * Cluster nodes and a one-shot that creates the cluster, publishing nothing, with no default secret
 * and no password in a command line, on the base's exact image; every eventrelay process on the
 * cluster (REDIS_CLUSTER_NODES, EVENTRELAY_SHARDS) once the cluster exists. The scripts themselves
 * run for real in cluster-redis.test.ts.
 */
import path from 'node:path';
import { renderKustomization } from '../support/kustomize';
import { Rendered, redisBytes, splitImage, type Workload } from './k8s-objects';
import { REPO_ROOT as ROOT } from './promql-names';
import {
  clusterSeeds,
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

const FILES = ['docker-compose.yml', 'docker-compose.cluster.yml'];
/** The nodes in the order the create step lists them: the first three become the primaries. */
const NODES = ['redis', 'redis-2', 'redis-3', 'redis-4', 'redis-5', 'redis-6'];
const CREATE = 'redis-cluster-create';
/** The variables of the cluster design; the env specs may not know them yet (see the last tests). */

const compose = loadCompose(COMPOSE_VARS, FILES);
const base = loadCompose();
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

describe('docker-compose.cluster.yml over docker-compose.yml', () => {
  it('runs six Redis nodes and the create step on the exact image of the base, and nothing else that runs Redis', () => {
    const baseImage = base.services['redis']?.image as string;
    expect(isExactImage(baseImage)).toBe(true);
    const runningRedis = Object.entries(compose.services)
      .filter(([, s]) => splitImage(s.image ?? '').name === 'redis')
      .map(([name]) => name);
    expect(runningRedis.sort()).toEqual([...NODES, CREATE].sort());
    for (const name of runningRedis) expect({ service: name, image: service(name).image }).toEqual({ service: name, image: baseImage });
    for (const [name, s] of Object.entries(compose.services))
      if (!s.build) expect({ service: name, exact: isExactImage(s.image ?? '') }).toEqual({ service: name, exact: true });
    // Sentinel is durable mode's, and excludes Cluster.
    expect(JSON.stringify(compose)).not.toMatch(/sentinel/i);
  });

  it('publishes no port of any node or of the create step, and no service publishes 6379 or the cluster bus 16379', () => {
    for (const name of [...NODES, CREATE])
      expect({ service: name, ports: service(name).ports ?? [] }).toEqual({ service: name, ports: [] });
    for (const [name, s] of Object.entries(compose.services))
      expect({ service: name, redis: publishedPorts(s).filter(([, target]) => target === 6379 || target === 16379) }).toEqual({
        service: name,
        redis: [],
      });
    for (const [name, s] of Object.entries(base.services))
      expect({ service: name, ports: service(name).ports }).toEqual({ service: name, ports: s.ports });
  });

  it('has no default secret, and refuses to start without REDIS_PASSWORD', () => {
    expectOverrideNeedsPassword('docker-compose.cluster.yml');
  });

  it('puts the password in no command line or health check: each node reads it on stdin, redis-cli from REDISCLI_AUTH', () => {
    for (const [name, s] of Object.entries(compose.services)) {
      const command = JSON.stringify(s.command ?? []);
      expect({ service: name, inCommand: command.includes(TEST_REDIS_PASSWORD) }).toEqual({ service: name, inCommand: false });
      expect({ service: name, inHealthcheck: JSON.stringify(s.healthcheck ?? {}).includes(TEST_REDIS_PASSWORD) }).toEqual({
        service: name,
        inHealthcheck: false,
      });
      // Nor a password option of redis-server or redis-cli (-a, --pass, --askpass would prompt) anywhere.
      expect({ service: name, options: command.match(/--(requirepass|masterauth|pass|askpass)\b|redis-cli[^"\n]* -a /g) }).toEqual({
        service: name,
        options: null,
      });
    }
    for (const name of NODES) {
      expect(stdinConfig(scriptOf(name))).toEqual([
        'requirepass $REDIS_PASSWORD',
        // any node may be a replica after a failover
        'masterauth $REDIS_PASSWORD',
        'cluster-enabled yes',
        // in the node's dir, on its volume: its id and its view of the cluster survive a restart
        'cluster-config-file nodes.conf',
        'cluster-node-timeout 5000',
        // clients are given names, never container addresses
        'cluster-announce-hostname $REDIS_SELF',
        'cluster-preferred-endpoint-type hostname',
      ]);
      expect(envOf(name)['REDIS_PASSWORD']).toBe(TEST_REDIS_PASSWORD);
    }
    for (const name of [...NODES, CREATE])
      expect({ service: name, auth: envOf(name)['REDISCLI_AUTH'] }).toEqual({ service: name, auth: TEST_REDIS_PASSWORD });
  });

  it('checks the health of every node authenticated, and only PONG (not cluster_state: the cluster is created once all are healthy)', () => {
    for (const name of NODES) {
      const test = JSON.stringify(service(name).healthcheck?.test);
      expect(test).toMatch(/redis-cli ping \| grep -qx PONG/);
      expect(test).not.toMatch(/cluster_state/);
    }
  });

  it('runs every node with AOF fsynced every second, noeviction and a maxmemory, as a non-root user, on a new named volume of its own at /data', () => {
    const volumes = new Set<string>();
    for (const name of NODES) {
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
      const data = (service(name).volumes ?? []).filter((v) => (typeof v === 'string' ? v.endsWith(':/data') : v.target === '/data'));
      expect({ service: name, data: data.length }).toEqual({ service: name, data: 1 });
      const [volume] = namedVolumes({ volumes: data });
      expect(Object.keys(compose.volumes ?? {})).toContain(volume);
      volumes.add(volume as string);
      expect({ service: name, uid: Number(service(name).user?.split(':')[0]) }).toEqual({ service: name, uid: 999 });
    }
    expect(volumes.size).toBe(NODES.length);
    // Not the base's volume: a node must start empty (--cluster create refuses one that holds keys),
    // and the single Redis's data stays where it was.
    for (const volume of namedVolumes(base.services['redis'] as ComposeService)) expect(volumes.has(volume)).toBe(false);
  });

  it('gives each node its compose name to announce and the names of all six, in the order the create step uses', () => {
    for (const name of NODES) {
      const env = envOf(name);
      expect({ service: name, self: env['REDIS_SELF'], hosts: env['REDIS_HOSTS']?.split(' ') }).toEqual({
        service: name,
        self: name,
        hosts: NODES,
      });
    }
    expect(envOf(CREATE)['REDIS_HOSTS']?.split(' ')).toEqual(NODES);
    // Every node's script is the same; each finds its peers again at their current addresses.
    for (const name of NODES) expect(scriptOf(name)).toBe(scriptOf('redis'));
    expect(scriptOf('redis')).toMatch(/cluster meet "\$address" 6379/);
  });

  it('creates the cluster only when no node is in one yet: it reads CLUSTER INFO of every node first', () => {
    const script = scriptOf(CREATE);
    const lines = script.split('\n');
    const create = lines.findIndex((l) => /redis-cli --cluster create /.test(l));
    expect(create).toBeGreaterThan(-1);
    expect(lines.filter((l) => /--cluster create/.test(l) && !l.trimStart().startsWith('#'))).toHaveLength(1);
    // One replica per primary, and no question asked (there is no terminal).
    expect(lines[create]).toMatch(/--cluster create \$addresses --cluster-replicas 1 --cluster-yes$/);
    // Before it: CLUSTER INFO read from every node, and the create only in the branch where no node
    // knows another or serves a slot.
    const before = lines.slice(0, create).join('\n');
    expect(before).toMatch(/redis-cli -h "\$1" cluster info/);
    expect(before).toMatch(/cluster_known_nodes\)" != 1 \] \|\| \[ "\$\(field "\$host" cluster_slots_assigned\)" != 0 \]/);
    expect(before).toMatch(/if \[ -n "\$created" \]; then\n[^\n]*nothing to create"\nelse\n/);
    // And it ends only once every node reports cluster_state:ok.
    expect(lines.slice(create).join('\n')).toMatch(/until \[ "\$\(field "\$host" cluster_state\)" = ok \]/);
  });

  it('runs the create step once per "up", after every node is healthy, as a non-root user on a read-only root', () => {
    const s = service(CREATE);
    expect((s as ComposeService & { restart?: string }).restart).toBe('no');
    const dependsOn = s.depends_on as Record<string, { condition?: string }>;
    for (const name of NODES)
      expect({ node: name, condition: dependsOn[name]?.condition }).toEqual({ node: name, condition: 'service_healthy' });
    expect({ readOnly: s.read_only, capDrop: s.cap_drop, uid: Number(s.user?.split(':')[0]) }).toEqual({
      readOnly: true,
      capDrop: ['ALL'],
      uid: 999,
    });
    expect(namedVolumes(s)).toEqual([]);
  });

  it('gives every eventrelay process the six nodes and 12 shards, and starts it once the cluster is created', () => {
    for (const name of NAMES) {
      const env = envOf(name);
      expect({ service: name, nodes: clusterSeeds(env['REDIS_CLUSTER_NODES']) }).toEqual({
        service: name,
        nodes: NODES.map((n) => `${n}:6379`),
      });
      expect({ service: name, shards: env['EVENTRELAY_SHARDS'] }).toEqual({ service: name, shards: '12' });
      // Cluster keys need a {hash tag} in the prefix; Sentinel cannot be combined with Cluster.
      expect({ service: name, prefix: env['EVENTRELAY_PREFIX'] }).toEqual({ service: name, prefix: expect.stringMatching(/\{[^{}]+\}/) });
      expect({ service: name, sentinels: env['REDIS_SENTINELS'] }).toEqual({ service: name, sentinels: undefined });
      const dependsOn = service(name).depends_on as Record<string, { condition?: string }>;
      expect({ service: name, create: dependsOn[CREATE] }).toEqual({
        service: name,
        create: { condition: 'service_completed_successfully' },
      });
      // Every other variable is one the process reads.
      const unknown = Object.keys(env).filter((k) => !(k in info(name).spec));
      expect({ service: name, unknown }).toEqual({ service: name, unknown: [] });
    }
  });

  it('loads in every process: the nodes and the shards as the process reads them', () => {
    for (const name of NAMES) {
      const loaded = loadFor(name, envOf(name));
      expect({ service: name, nodes: clusterSeeds(loaded['REDIS_CLUSTER_NODES']) }).toEqual({
        service: name,
        nodes: NODES.map((n) => `${n}:6379`),
      });
      expect({ service: name, shards: loaded['EVENTRELAY_SHARDS'] }).toEqual({ service: name, shards: 12 });
    }
  });

  it('starts the nodes and creates the cluster with the same scripts as k8s/overlays/cluster', () => {
    const k8s = new Rendered(renderKustomization(path.join(ROOT, 'k8s/overlays/cluster')));
    const node = k8s.one<Workload>('StatefulSet', 'eventrelay-redis').spec.template.spec.containers.find((c) => c.name === 'redis');
    const job = k8s.one<Workload>('Job', 'eventrelay-redis-cluster-create').spec.template.spec.containers[0];
    expect(scriptOf('redis')).toBe(node?.command?.[2]);
    expect(scriptOf(CREATE)).toBe(job?.command?.[2]);
  });
});
