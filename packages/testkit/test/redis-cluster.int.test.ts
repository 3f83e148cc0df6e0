/**
 * The local Redis Cluster harness: a 3 + 3 cluster with redis-cli's even slot layout, keys routed
 * by hash tag through a cluster client, a SIGKILLed primary replaced by its replica without losing
 * an acknowledged write, and no redis-server left after stop().
 */
import { Cluster, Redis } from 'ioredis';
import { startRedisCluster, type ClusterNode, type LocalRedisCluster } from '@eventrelay/testkit';

/** Whether a process with this pid still exists (signal 0 only checks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function keySlot(cluster: LocalRedisCluster, key: string): Promise<number> {
  const [node] = cluster.nodes;
  const client = new Redis({ host: node!.host, port: node!.port, lazyConnect: true });
  try {
    await client.connect();
    return Number(await client.call('CLUSTER', 'KEYSLOT', key));
  } finally {
    client.disconnect();
  }
}

function clusterClient(cluster: LocalRedisCluster, password?: string): Cluster {
  const client = new Cluster(
    cluster.nodes.map(({ host, port }) => ({ host, port })),
    password === undefined ? {} : { redisOptions: { password } },
  );
  client.on('error', () => undefined);
  return client;
}

describe('startRedisCluster, 3 primaries with a replica each', () => {
  let cluster: LocalRedisCluster;
  let client: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 1 });
    client = clusterClient(cluster);
  });

  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('starts 6 nodes whose 3 primaries serve even, contiguous slot ranges', async () => {
    expect(cluster.nodes).toHaveLength(6);
    expect(cluster.seeds).toBe(cluster.nodes.map((n) => `127.0.0.1:${n.port}`).join(','));
    const primaries = await cluster.primaries();
    expect(primaries).toHaveLength(3);
    const slots = (await cluster.eachPrimary((c) => c.call('CLUSTER', 'SLOTS'))) as Array<Array<[number, number, [string, number]]>>;
    const ranges = slots[0]!.map(([start, end, [, port]]) => [start, end, port]).sort((a, b) => a[0]! - b[0]!);
    expect(ranges).toEqual([
      [0, 5460, primaries[0]!.port],
      [5461, 10922, primaries[1]!.port],
      [10923, 16383, primaries[2]!.port],
    ]);
    expect((await cluster.primaryOfSlot(10922)).port).toBe(primaries[1]!.port);
  });

  it('routes keys with different hash tags to different primaries, and reads them back', async () => {
    const keys = ['{alpha}:k', '{bravo}:k', '{charlie}:k', '{delta}:k', '{echo}:k', '{foxtrot}:k'];
    for (const key of keys) await client.set(key, `v-${key}`);
    expect(await Promise.all(keys.map((key) => client.get(key)))).toEqual(keys.map((key) => `v-${key}`));
    const owners = new Set<number>();
    for (const key of keys) owners.add((await cluster.primaryOfSlot(await keySlot(cluster, key))).port);
    expect(owners.size).toBe(3);
  });

  it('deleteKeys removes the matching keys from every primary and leaves the others', async () => {
    const doomed = ['{alpha}:doomed', '{bravo}:doomed', '{charlie}:doomed'];
    for (const key of doomed) await client.set(key, '1');
    expect(await cluster.deleteKeys('*:doomed')).toBe(3);
    expect(await Promise.all(doomed.map((key) => client.exists(key)))).toEqual([0, 0, 0]);
    expect(await client.get('{alpha}:k')).toBe('v-{alpha}:k');
  });

  it('promotes a replica when the primary of a slot is SIGKILLed, keeping the acknowledged write', async () => {
    const key = '{failover}:kept';
    const slot = await keySlot(cluster, key);
    const victim: ClusterNode = await cluster.primaryOfSlot(slot);
    await client.set(key, 'before the crash');
    // WAIT counts only the writes of its own connection; the replication stream is ordered, so a
    // replica that acknowledged this later write on the victim also holds the cluster client's.
    const direct = new Redis({ host: victim.host, port: victim.port });
    direct.on('error', () => undefined);
    try {
      await direct.set('{failover}:fence', '1');
      expect(await direct.wait(1, 1000)).toBe(1);
    } finally {
      direct.disconnect();
    }

    await cluster.kill(victim.port);
    expect(alive(victim.pid)).toBe(false);
    await cluster.waitHealthy(20_000);

    const promoted = await cluster.primaryOfSlot(slot);
    expect(promoted.port).not.toBe(victim.port);
    expect((await cluster.primaries()).map((n) => n.port)).not.toContain(victim.port);
    expect(await client.get(key)).toBe('before the crash');
    expect(await cluster.eachPrimary((_, node) => Promise.resolve(node.port))).toContain(promoted.port);
  });

  it('stop() leaves no redis-server running, and may be called again', async () => {
    const pids = cluster.nodes.map((n) => n.pid);
    expect(pids.filter(alive).length).toBe(5);
    await cluster.stop();
    await cluster.stop();
    expect(pids.filter(alive)).toEqual([]);
  });
});

describe('startRedisCluster with a password', () => {
  it('protects every node and serves a client that authenticates', async () => {
    const cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 0, password: 'cluster-secret' });
    const client = clusterClient(cluster, 'cluster-secret');
    try {
      const [node] = cluster.nodes;
      const anonymous = new Redis({ host: node!.host, port: node!.port, lazyConnect: true, maxRetriesPerRequest: 0 });
      anonymous.on('error', () => undefined);
      try {
        await expect(anonymous.get('x')).rejects.toThrow(/NOAUTH/);
      } finally {
        anonymous.disconnect();
      }
      await client.set('{pw}:k', 'v');
      expect(await client.get('{pw}:k')).toBe('v');
      expect(await cluster.eachPrimary((c) => c.ping())).toEqual(['PONG', 'PONG', 'PONG']);
      expect(await cluster.deleteKeys('{pw}:*')).toBe(1);
    } finally {
      client.disconnect();
      await cluster.stop();
    }
  });
});
