/**
 * The scripts of the Redis Cluster deployments, run for real: k8s/overlays/cluster's node start
 * script and its create Job's script (docker-compose.cluster.yml has the same, compose-cluster.test.ts
 * checks). Six redis-server from PATH, each on a loopback address of its own (127.a.b.2 to .7, a
 * random a.b per run) with the deployments' fixed ports 6379 and 16379 (the cluster bus), the
 * addresses standing in for the pods' DNS names; only where files go and what the servers bind to
 * is changed (bind-source-addr too: on one loopback interface a node would otherwise reach the
 * others from 127.0.0.1 and be taken for that address).
 *
 * Checked: the create script makes the first three nodes primaries with a third of the slots each
 * and the last three their replicas, with the password, and the nodes give clients their names;
 * run again it creates nothing and changes nothing; and after every node stopped and came back on a
 * new address (compose's down and up, every pod rescheduled), the nodes find each other again
 * (the node script meets the others at their new addresses), the replicas follow their primaries,
 * and the data is there.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { eventually, spawnChild, type ChildHandle } from '@eventrelay/testkit';
import { renderKustomization } from '../support/kustomize';
import { Rendered, expandK8s, type Container, type Workload } from './k8s-objects';
import { REPO_ROOT as ROOT } from './promql-names';

const REDIS_PORT = 6379;
const BUS_PORT = 16379;
const PASSWORD = randomBytes(16).toString('hex');
const SLOT_RANGES = [
  [0, 5460],
  [5461, 10922],
  [10923, 16383],
];

const rendered = new Rendered(renderKustomization(path.join(ROOT, 'k8s/overlays/cluster')));
const nodeContainer = rendered
  .one<Workload>('StatefulSet', 'eventrelay-redis')
  .spec.template.spec.containers.find((c) => c.name === 'redis') as Container;
const createContainer = rendered.one<Workload>('Job', 'eventrelay-redis-cluster-create').spec.template.spec.containers[0] as Container;

let dir: string;
const nodes = new Map<number, ChildHandle>();
const clients: (Redis | Cluster)[] = [];

/** Whether something can listen on host:port now. */
function free(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** Six loopback addresses on which 6379 and 16379 are free. */
async function freeAddresses(avoid: string[] = []): Promise<string[]> {
  for (let attempt = 0; attempt < 6; attempt++) {
    const net24 = `127.${randomInt(1, 255)}.${randomInt(0, 255)}`;
    const candidate = [2, 3, 4, 5, 6, 7].map((i) => `${net24}.${i}`);
    if (candidate.some((h) => avoid.includes(h))) continue;
    const ok = await Promise.all(candidate.flatMap((h) => [free(h, REDIS_PORT), free(h, BUS_PORT)]));
    if (ok.every(Boolean)) return candidate;
  }
  throw new Error('no free loopback addresses for 6379 and 16379');
}

async function ask(host: string, ...args: string[]): Promise<unknown> {
  const c = new Redis({
    host,
    port: REDIS_PORT,
    password: PASSWORD,
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  c.on('error', () => undefined);
  clients.push(c);
  try {
    await c.connect();
    return await c.call(args[0] as string, ...args.slice(1));
  } finally {
    c.disconnect();
  }
}

/** CLUSTER INFO of a node as a map. */
async function clusterInfo(host: string): Promise<Record<string, string>> {
  const text = (await ask(host, 'CLUSTER', 'INFO')) as string;
  return Object.fromEntries(
    text
      .split('\r\n')
      .filter((l) => l.includes(':'))
      .map((l) => l.split(':') as [string, string]),
  );
}

interface NodeLine {
  id: string;
  address: string;
  hostname: string;
  flags: string[];
  primaryId: string;
  slots: string[];
}
/** CLUSTER NODES of a node: id, ip:port, announced hostname, flags, its primary's id, slot ranges. */
async function clusterNodes(host: string): Promise<NodeLine[]> {
  const text = (await ask(host, 'CLUSTER', 'NODES')) as string;
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, addr, flags, primaryId, , , , , ...slots] = line.split(' ');
      const [address, hostname] = (addr as string).split(',');
      return {
        id: id as string,
        address: (address as string).split('@')[0] as string,
        hostname: hostname ?? '',
        flags: (flags as string).split(','),
        primaryId: primaryId as string,
        slots,
      };
    });
}

function startNode(index: number, hosts: string[]): ChildHandle {
  const host = hosts[index] as string;
  const data = path.join(dir, `node-${index}`);
  mkdirSync(data, { recursive: true });
  // The container's own redis-server arguments, with its folder here instead of the volume's /data.
  const args = (nodeContainer.args ?? []).map((a) => expandK8s(a, { REDIS_MAXMEMORY: '64mb' }));
  args[args.indexOf('--dir') + 1] = data;
  const handle = spawnChild({
    name: `redis ${host}`,
    command: 'sh',
    args: [
      '-c',
      nodeContainer.command?.[2] as string,
      'redis-server',
      ...args,
      '--bind',
      host,
      '--bind-source-addr',
      host,
      '--logfile',
      path.join(data, 'redis.log'),
    ],
    env: { REDIS_PASSWORD: PASSWORD, REDISCLI_AUTH: PASSWORD, REDIS_SELF: host, REDIS_HOSTS: hosts.join(' ') },
    cwd: data,
  });
  nodes.set(index, handle);
  return handle;
}

/** Runs the create Job's script to its end. */
async function create(hosts: string[]): Promise<{ code: number | null; output: string }> {
  const handle = spawnChild({
    name: 'create',
    command: 'sh',
    args: ['-c', createContainer.command?.[2] as string],
    env: { REDISCLI_AUTH: PASSWORD, REDIS_HOSTS: hosts.join(' ') },
    cwd: dir,
  });
  const timer = setTimeout(() => handle.child.kill('SIGKILL'), 60_000);
  const exit = await handle.exited;
  clearTimeout(timer);
  return { code: exit.code, output: handle.output() };
}

/** Primaries (sorted by their first slot) and replicas as CLUSTER NODES of `host` shows them. */
async function topology(host: string) {
  const all = await clusterNodes(host);
  const primaries = all.filter((n) => n.flags.includes('master')).sort((a, b) => parseInt(a.slots[0] ?? '0') - parseInt(b.slots[0] ?? '0'));
  return { all, primaries, replicas: all.filter((n) => n.flags.includes('slave')) };
}

/** Every node reports cluster_state:ok, knows all six, and none is flagged failing or in a handshake. */
async function healthy(hosts: string[]): Promise<void> {
  for (const h of hosts) {
    const infoOf = await clusterInfo(h);
    expect({ node: h, state: infoOf['cluster_state'], known: infoOf['cluster_known_nodes'] }).toEqual({ node: h, state: 'ok', known: '6' });
    const flags = (await clusterNodes(h)).flatMap((n) => n.flags).filter((f) => /fail|handshake|noaddr/.test(f));
    expect({ node: h, flags }).toEqual({ node: h, flags: [] });
  }
}

let hosts: string[];

/** The major version of redis-server on PATH: the scripts use Redis 7 settings (the images run 7.4). */
const redisMajor = Number(/v=(\d+)\./.exec(execFileSync('redis-server', ['--version'], { encoding: 'utf8' }))?.[1] ?? 0);

beforeAll(async () => {
  if (redisMajor < 7) throw new Error(`these scripts need redis-server 7.0 or newer on PATH, found major version ${redisMajor}`);
  dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-cluster-redis-'));
  hosts = await freeAddresses();
}, 30_000);

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all([...nodes.values()].map((h) => h.stop('SIGTERM', 5000)));
  if (!process.env['KEEP_CLUSTER_REDIS']) rmSync(dir, { recursive: true, force: true });
  else console.log(dir);
}, 30_000);

// cluster-announce-hostname, cluster-preferred-endpoint-type and bind-source-addr came with Redis 7.0:
// the scripts cannot run on an older redis-server, and the suite says so rather than skip.
describe('Redis Cluster scripts (k8s/overlays/cluster, docker-compose.cluster.yml)', () => {
  let ids: string[];

  it('create a cluster of three primaries, each with a replica, that gives clients the nodes’ names', async () => {
    hosts.forEach((_, i) => startNode(i, hosts));
    const { code, output } = await create(hosts);
    expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('[OK] All 16384 slots covered.') });
    // The create returns once the nodes agree on slots; meeting every other node by gossip can take a moment more.
    await eventually(() => healthy(hosts), 15_000);
    // Roles reach every node by gossip, within a second or so of the create.
    const { all } = await eventually(
      async () => {
        const t = await topology(hosts[0] as string);
        // The first three listed are the primaries, with the slots split evenly; the last three replicate one each.
        expect(t.primaries.map((p) => ({ address: p.address, slots: p.slots }))).toEqual(
          SLOT_RANGES.map(([from, to], i) => ({ address: `${hosts[i]}:${REDIS_PORT}`, slots: [`${from}-${to}`] })),
        );
        expect(t.replicas.map((r) => r.address).sort()).toEqual(
          hosts
            .slice(3)
            .map((h) => `${h}:${REDIS_PORT}`)
            .sort(),
        );
        expect(t.replicas.map((r) => r.primaryId).sort()).toEqual(t.primaries.map((p) => p.id).sort());
        return t;
      },
      10_000,
      200,
    );
    // Each node announces the name it was given (here its address stands in for the pod's name).
    for (const n of all) expect({ node: n.address, hostname: n.hostname }).toEqual({ node: n.address, hostname: n.address.split(':')[0] });
    // The password is required.
    await expect(
      new Promise((resolve, reject) => {
        const socket = net.connect({ host: hosts[0] as string, port: REDIS_PORT }, () => socket.write('CLUSTER INFO\r\n'));
        socket.setTimeout(3000, () => socket.destroy(new Error('no answer')));
        socket.once('error', reject);
        socket.once('data', (d: Buffer) => {
          socket.destroy();
          resolve(d.toString());
        });
      }),
    ).resolves.toMatch(/^-NOAUTH/);
    ids = all.map((n) => n.id).sort();
  }, 90_000);

  it('create nothing when run again, and change nothing', async () => {
    const epoch = (await clusterInfo(hosts[0] as string))['cluster_current_epoch'];
    const { code, output } = await create(hosts);
    expect({ code, created: /nothing to create/.test(output), ran: /Performing hash slots allocation/.test(output) }).toEqual({
      code: 0,
      created: true,
      ran: false,
    });
    const { all } = await topology(hosts[0] as string);
    expect(all.map((n) => n.id).sort()).toEqual(ids);
    expect((await clusterInfo(hosts[0] as string))['cluster_current_epoch']).toBe(epoch);
  }, 60_000);

  it('take writes from a cluster client across slots, all nodes given by name', async () => {
    const c = new Cluster(
      hosts.map((host) => ({ host, port: REDIS_PORT })),
      { redisOptions: { password: PASSWORD }, clusterRetryStrategy: () => null },
    );
    c.on('error', () => undefined);
    clients.push(c);
    // The home slot and two shard tags, on different primaries.
    const keys = ['{eventrelay}:config', '{eventrelay.1.x}:route:wait', '{eventrelay.7.x}:deliver:wait'];
    const slots = await Promise.all(keys.map((k) => ask(hosts[0] as string, 'CLUSTER', 'KEYSLOT', k)));
    expect(
      new Set(slots.map((s) => SLOT_RANGES.findIndex(([from, to]) => (s as number) >= (from as number) && (s as number) <= (to as number))))
        .size,
    ).toBeGreaterThan(1);
    for (const k of keys) await c.set(k, `value of ${k}`);
    for (const k of keys) expect(await c.get(k)).toBe(`value of ${k}`);
    expect(new Set(c.nodes('master').map((n) => n.options.host))).toEqual(new Set(hosts.slice(0, 3)));
    c.disconnect();
  }, 30_000);

  it('find each other again when every node comes back on a new address, with the data', async () => {
    await Promise.all([...nodes.values()].map((h) => h.stop('SIGTERM', 10_000)));
    const moved = await freeAddresses(hosts);
    moved.forEach((_, i) => startNode(i, moved));
    // The create step, as at the next "up": it finds the cluster and waits until every slot is served.
    const { code, output } = await create(moved);
    expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('nothing to create') });
    // Right after a restart the nodes still trust nodes.conf (cluster_state ok, nothing flagged, for
    // the first cluster-node-timeout): what shows they found each other is every node knowing every
    // other at its new address.
    const { primaries } = await eventually(
      async () => {
        await healthy(moved);
        for (const h of moved) {
          const t = await topology(h);
          expect({ node: h, ids: t.all.map((n) => n.id).sort() }).toEqual({ node: h, ids });
          expect({ node: h, addresses: t.all.map((n) => n.address).sort() }).toEqual({
            node: h,
            addresses: moved.map((m) => `${m}:${REDIS_PORT}`).sort(),
          });
        }
        return topology(moved[0] as string);
      },
      30_000,
      200,
    );
    // The replicas replicate their primaries at the primaries' new addresses.
    for (const h of moved.slice(3))
      await eventually(
        async () => {
          const replication = (await ask(h, 'INFO', 'replication')) as string;
          const of = /master_host:(\S+)/.exec(replication)?.[1];
          expect({
            replica: h,
            of: primaries.some((p) => p.address === `${of}:${REDIS_PORT}`),
            link: /master_link_status:(\w+)/.exec(replication)?.[1],
          }).toEqual({
            replica: h,
            of: true,
            link: 'up',
          });
        },
        20_000,
        200,
      );
    const c = new Cluster([{ host: moved[0] as string, port: REDIS_PORT }], {
      redisOptions: { password: PASSWORD },
      clusterRetryStrategy: () => null,
    });
    c.on('error', () => undefined);
    clients.push(c);
    expect(await c.get('{eventrelay}:config')).toBe('value of {eventrelay}:config');
    expect(await c.get('{eventrelay.7.x}:deliver:wait')).toBe('value of {eventrelay.7.x}:deliver:wait');
    c.disconnect();
  }, 120_000);
});
