/**
 * A real Redis Cluster of the caller's own (redis-server processes on free loopback ports, joined
 * by `redis-cli --cluster create`), for the integration tests and benches that must see slots,
 * redirections and failovers as a clustered deployment would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { eventually } from './eventually.js';
import { freePort, runToExit, startChild, type ChildHandle } from './process.js';

const HOST = '127.0.0.1';
const SLOTS = 16384;

export interface ClusterNode {
  readonly host: string;
  readonly port: number;
  readonly pid: number;
}

export interface LocalRedisCluster {
  /** `127.0.0.1:p1,127.0.0.1:p2,…`, every node, for REDIS_CLUSTER_NODES. */
  readonly seeds: string;
  readonly nodes: readonly ClusterNode[];
  /** The primaries holding slots now, as a live node's CLUSTER NODES says, sorted by their first slot. */
  primaries(): Promise<ClusterNode[]>;
  /** The primary serving `slot` now, as a live node's CLUSTER NODES says. */
  primaryOfSlot(slot: number): Promise<ClusterNode>;
  /** SIGKILLs one node, as a crash would, and waits for its exit; it is not restarted. */
  kill(port: number): Promise<void>;
  /**
   * Resolves once every running node says cluster_state:ok and sees all 16384 slots served by running
   * primaries (after a kill: once a replica was promoted); rejects after `timeoutMs` with what it saw.
   */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** SCAN + UNLINK the keys matching `pattern` on every running primary; returns how many went. */
  deleteKeys(pattern: string): Promise<number>;
  /** Runs `fn` with a plain client of each running primary (INFO cpu, INFO commandstats for benches). */
  eachPrimary<T>(fn: (client: Redis, node: ClusterNode) => Promise<T>): Promise<T[]>;
  /** SIGKILLs every node and deletes their folder; safe to call twice. */
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  /** 3 by default, the least redis-cli accepts. */
  readonly primaries?: number;
  /** 1 by default. */
  readonly replicasPerPrimary?: number;
  /** requirepass and masterauth of every node. */
  readonly password?: string;
  /** Each node logs to `<logDir>/redis-<port>.log` at notice level (failovers show there); by default warnings go to the harness's buffer. */
  readonly logDir?: string;
  /** cluster-node-timeout, 1000 ms by default so that a failover in a test takes seconds, not the 15 s of Redis's default. */
  readonly nodeTimeoutMs?: number;
}

interface StartedNode extends ClusterNode {
  readonly handle: ChildHandle;
}

/** One line of CLUSTER NODES: the node's port, its flags and the slot ranges it serves. */
interface NodeView {
  readonly port: number;
  readonly flags: readonly string[];
  readonly ranges: ReadonlyArray<readonly [number, number]>;
}

/**
 * Starts `primaries × (1 + replicasPerPrimary)` nodes, joins them with `redis-cli --cluster create`
 * (which gives the primaries even, contiguous slot ranges), and resolves once the cluster is healthy
 * and every replica is in sync with its primary. stop() it, also when a test fails.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<LocalRedisCluster> {
  const primaryCount = options.primaries ?? 3;
  const replicas = options.replicasPerPrimary ?? 1;
  if (!Number.isInteger(primaryCount) || primaryCount < 3)
    throw new Error(`a Redis Cluster needs at least 3 primaries, not ${primaryCount}`);
  if (!Number.isInteger(replicas) || replicas < 0) throw new Error(`replicasPerPrimary must be a whole number, not ${replicas}`);
  const { password } = options;
  const dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-cluster-'));
  const started: StartedNode[] = [];
  // A test or bench that ends without stop() must not leave redis-servers or their folder behind.
  const cleanUpAtExit = () => {
    for (const node of started) if (node.handle.running()) node.handle.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', cleanUpAtExit);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await Promise.all(started.map((node) => node.handle.stop('SIGKILL', 5000)));
      process.off('exit', cleanUpAtExit);
      rmSync(dir, { recursive: true, force: true });
    })());

  const running = () => started.filter((node) => node.handle.running());
  try {
    const used = new Set<number>();
    for (let i = 0; i < primaryCount * (1 + replicas); i++) started.push(await startNodeOnFreePorts({ ...options, dir }, used));
    await createCluster(started, replicas, password);
    await waitUntilHealthy(running, password, 20_000);
    await waitForReplicas(started, replicas, password, 20_000);
  } catch (err) {
    await stop();
    throw err;
  }
  const byPort = new Map(started.map((node) => [node.port, node]));

  const asNode = (port: number): ClusterNode => {
    const node = byPort.get(port);
    if (!node) throw new Error(`the cluster names ${HOST}:${port}, a node this harness did not start`);
    return { host: node.host, port: node.port, pid: node.pid };
  };
  /** CLUSTER NODES from the first running node that answers: its view, not a vote. */
  const clusterView = async (): Promise<NodeView[]> => {
    const failures: string[] = [];
    for (const node of running()) {
      try {
        return parseClusterNodes(await onNode(node.port, password, (c) => c.call('CLUSTER', 'NODES')));
      } catch (err) {
        failures.push(`${HOST}:${node.port}: ${messageOf(err)}`);
      }
    }
    throw new Error(`no running node answered CLUSTER NODES (${failures.join('; ') || 'none is running'})`);
  };
  const primaries = async () =>
    (await clusterView())
      .filter((view) => view.flags.includes('master') && view.ranges.length > 0)
      .sort((a, b) => firstSlot(a) - firstSlot(b))
      .map((view) => asNode(view.port));
  const eachPrimary = async <T>(fn: (client: Redis, node: ClusterNode) => Promise<T>): Promise<T[]> => {
    const live = (await primaries()).filter((node) => byPort.get(node.port)?.handle.running());
    return Promise.all(live.map((node) => onNode(node.port, password, (client) => fn(client, node))));
  };

  return {
    seeds: started.map((node) => `${node.host}:${node.port}`).join(','),
    nodes: started.map((node) => asNode(node.port)),
    primaries,
    async primaryOfSlot(slot) {
      if (!Number.isInteger(slot) || slot < 0 || slot >= SLOTS) throw new Error(`no slot ${slot}: slots are 0 to ${SLOTS - 1}`);
      const owner = (await clusterView()).find(
        (view) => view.flags.includes('master') && view.ranges.some(([a, b]) => a <= slot && slot <= b),
      );
      if (!owner) throw new Error(`no primary serves slot ${slot}`);
      return asNode(owner.port);
    },
    async kill(port) {
      const node = byPort.get(port);
      if (!node) throw new Error(`no node of this cluster listens on ${HOST}:${port}`);
      await node.handle.stop('SIGKILL', 5000);
    },
    waitHealthy: (timeoutMs = 20_000) => waitUntilHealthy(running, password, timeoutMs),
    deleteKeys: async (pattern) => (await eachPrimary((client) => unlinkMatching(client, pattern))).reduce((a, b) => a + b, 0),
    eachPrimary,
    stop,
  };
}

/** A free port not in `used` (free-port probes in a row may be handed the same one), then in it. */
async function freshPort(used: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (used.has(port)) continue;
    used.add(port);
    return port;
  }
}

/** Another process may bind a port between the probe and redis-server's start: then new ports, twice at most. */
async function startNodeOnFreePorts(options: RedisClusterOptions & { readonly dir: string }, used: Set<number>): Promise<StartedNode> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNode({ ...options, port: await freshPort(used), busPort: await freshPort(used) });
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
}

async function startNode(
  options: RedisClusterOptions & { readonly dir: string; readonly port: number; readonly busPort: number },
): Promise<StartedNode> {
  const { dir, port, busPort, password } = options;
  const logging = options.logDir
    ? ['--loglevel', 'notice', '--logfile', path.join(options.logDir, `redis-${port}.log`)]
    : ['--loglevel', 'warning', '--logfile', ''];
  const handle = await startChild({
    name: `redis-server ${HOST}:${port} (cluster)`,
    command: 'redis-server',
    args: [
      ...['--port', String(port), '--bind', HOST],
      // The bus defaults to port + 10000, past 65535 for most free ports: name one of its own.
      ...['--cluster-enabled', 'yes', '--cluster-port', String(busPort)],
      ...['--cluster-config-file', path.join(dir, `nodes-${port}.conf`), '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 1000)],
      ...['--appendonly', 'no', '--save', '', '--dir', dir],
      // A replica's full sync starts at once instead of after Redis's 5 s wait for other replicas;
      // until it is in sync a replica would neither acknowledge a WAIT nor be allowed to fail over.
      ...['--repl-diskless-sync-delay', '0'],
      ...logging,
      ...(password === undefined ? [] : ['--requirepass', password, '--masterauth', password]),
    ],
    cwd: dir,
    ready: () =>
      onNode(port, password, (c) => c.ping()).then(
        (answer) => answer === 'PONG',
        () => false,
      ),
    readyTimeoutMs: 10_000,
  });
  if (handle.pid === undefined) throw new Error(`redis-server on ${HOST}:${port} has no pid`);
  return { host: HOST, port, pid: handle.pid, handle };
}

/**
 * `redis-cli --cluster create`, tried again after a failure once the nodes are reset: it refuses
 * nodes that a failed attempt left knowing each other or holding slots.
 */
async function createCluster(nodes: readonly StartedNode[], replicas: number, password: string | undefined): Promise<void> {
  const args = ['--cluster', 'create', ...nodes.map((n) => `${n.host}:${n.port}`), '--cluster-replicas', String(replicas), '--cluster-yes'];
  const attempts = 3;
  for (let attempt = 1; ; attempt++) {
    const result = await runToExit(
      {
        name: 'redis-cli --cluster create',
        command: 'redis-cli',
        args,
        ...(password === undefined ? {} : { env: { REDISCLI_AUTH: password } }),
      },
      30_000,
    );
    if (result.code === 0) return;
    const what = `redis-cli --cluster create failed (${result.code ?? result.signal}) on attempt ${attempt} of ${attempts}`;
    if (attempt === attempts) throw new Error(`${what}:\n${tail(result.output)}`);
    for (const node of nodes) {
      if (!node.handle.running())
        throw new Error(`${what}, and redis-server ${node.host}:${node.port} has exited:\n${tail(node.handle.output())}`);
      await onNode(node.port, password, (c) => c.call('CLUSTER', 'RESET', 'HARD')).catch((err: unknown) => {
        throw new Error(`${what}, and ${node.host}:${node.port} refused CLUSTER RESET: ${messageOf(err)}`);
      });
    }
  }
}

async function waitUntilHealthy(running: () => StartedNode[], password: string | undefined, timeoutMs: number): Promise<void> {
  try {
    await eventually(
      async () => {
        const problems = await healthProblems(running(), password);
        if (problems.length > 0) throw new Error(problems.join('; '));
      },
      timeoutMs,
      100,
    );
  } catch (err) {
    throw new Error(`the Redis Cluster was not healthy within ${timeoutMs} ms: ${messageOf(err)}`, { cause: err });
  }
}

/** What keeps the cluster from serving every slot, as each running node sees it; empty when healthy. */
async function healthProblems(nodes: readonly StartedNode[], password: string | undefined): Promise<string[]> {
  if (nodes.length === 0) return ['no node is running'];
  const live = new Set(nodes.map((node) => node.port));
  const seen = await Promise.all(
    nodes.map(async (node) => {
      const at = `${node.host}:${node.port}`;
      try {
        return await onNode(node.port, password, async (client) => {
          const problems: string[] = [];
          const state = /^cluster_state:(\w+)/m.exec(String(await client.call('CLUSTER', 'INFO')))?.[1];
          if (state !== 'ok') problems.push(`${at} says cluster_state:${state ?? 'unknown'}`);
          const missing = uncoveredSlots(await client.call('CLUSTER', 'SLOTS'), live);
          if (missing.length > 0) problems.push(`${at} sees ${missing.join(', ')}`);
          return problems;
        });
      } catch (err) {
        return [`${at} did not answer: ${messageOf(err)}`];
      }
    }),
  );
  return seen.flat();
}

/** The slot ranges of a CLUSTER SLOTS answer that no running primary serves, described. */
function uncoveredSlots(answer: unknown, live: ReadonlySet<number>): string[] {
  const served = new Uint8Array(SLOTS);
  const problems: string[] = [];
  for (const entry of Array.isArray(answer) ? answer : []) {
    const [start, end, primary] = entry as [number, number, [string, number] | undefined];
    const port = Number(primary?.[1]);
    if (live.has(port)) served.fill(1, start, end + 1);
    else problems.push(`slots ${start}-${end} on ${primary?.[0] ?? '?'}:${port}, not running`);
  }
  for (let slot = 0; slot < SLOTS; slot++) {
    if (served[slot]) continue;
    let end = slot;
    while (end + 1 < SLOTS && !served[end + 1]) end++;
    problems.push(`slots ${slot}-${end} unserved`);
    slot = end;
  }
  return problems;
}

/**
 * A fresh primary marks its replica online a moment after the cluster reports ok; a primary killed
 * before that has no replica able to take over, so the start waits for every replica link.
 */
async function waitForReplicas(nodes: readonly StartedNode[], replicas: number, password: string | undefined, timeoutMs: number) {
  const lagging = async () => {
    const out: string[] = [];
    for (const node of nodes) {
      const info = await onNode(node.port, password, (c) => c.info('replication'));
      const online = info.match(/^slave\d+:.*state=online/gm)?.length ?? 0;
      if (/^role:master/m.test(info) && online < replicas)
        out.push(`${node.host}:${node.port} has ${online} of ${replicas} replicas online`);
    }
    return out;
  };
  try {
    await eventually(
      async () => {
        const out = await lagging();
        if (out.length > 0) throw new Error(out.join('; '));
      },
      timeoutMs,
      100,
    );
  } catch (err) {
    throw new Error(`the Redis Cluster's replicas were not in sync within ${timeoutMs} ms: ${messageOf(err)}`, { cause: err });
  }
}

/**
 * One key at a time: keys a node holds span many slots, and a multi-key UNLINK across slots is a
 * CROSSSLOT error on a cluster node (which is why deletePrefix is not reused here).
 */
async function unlinkMatching(client: Redis, pattern: string): Promise<number> {
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length === 0) continue;
    const pipeline = client.pipeline();
    for (const key of keys) pipeline.unlink(key);
    for (const [err, count] of (await pipeline.exec()) ?? []) {
      if (err) throw err;
      deleted += Number(count);
    }
  } while (cursor !== '0');
  return deleted;
}

/** Runs `use` on a connection of its own to one node, closed after; fails fast when the node is down or hangs. */
async function onNode<T>(port: number, password: string | undefined, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({
    host: HOST,
    port,
    ...(password === undefined ? {} : { password }),
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // Errors reach the caller through the rejected promise; without a listener ioredis would also print them.
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await use(client);
  } finally {
    client.disconnect();
  }
}

/** CLUSTER NODES: `<id> <ip:port@bus[,hostname]> <flags> <primary> <ping> <pong> <epoch> <link> <slot or range>…`. */
function parseClusterNodes(text: unknown): NodeView[] {
  if (typeof text !== 'string') throw new Error(`CLUSTER NODES answered ${JSON.stringify(text)}`);
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [, address = '', flags = '', , , , , , ...slots] = line.trim().split(' ');
      const port = Number(/:(\d+)@/.exec(address)?.[1]);
      // `[slot->-id]` and `[slot-<-id]` are slots being migrated, still served by their owner's range.
      const ranges = slots
        .filter((s) => !s.startsWith('['))
        .map((s): [number, number] => {
          const [a = NaN, b = a] = s.split('-').map(Number);
          return [a, b];
        });
      return { port, flags: flags.split(','), ranges };
    });
}

function firstSlot(view: NodeView): number {
  return Math.min(...view.ranges.map(([a]) => a));
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function tail(text: string, lines = 30): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
