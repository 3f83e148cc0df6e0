/**
 * `pnpm bench:cluster`: the same load on one Redis node and on a Redis Cluster of 3 primaries, and
 * what each Redis node spends per delivered call. Phase "1 node": a private redis-server (no AOF),
 * EVENTRELAY_SHARDS=1. Phase "cluster": startRedisCluster with 3 primaries and no replicas (a
 * replica would add replication work to its primary's CPU: CLUSTER_BENCH_REPLICAS sets 1 or 2),
 * the services on REDIS_CLUSTER_NODES with EVENTRELAY_SHARDS=3, one per primary
 * (CLUSTER_BENCH_SHARDS=12 runs four per primary, as the shipped deployment files do). Both run the
 * built ingest, router, webhook-delivery and admin services under the prefix {bench-cluster}, 960
 * sources (CLUSTER_BENCH_SOURCES; enough that ids hashed onto shards load the primaries evenly),
 * each routed to its own destination (source i → destination i), all destinations on one receiver
 * answering 200 (a path per destination), so that intake work and delivery work both spread over
 * the shards. Load: CLUSTER_BENCH_CALLS calls (default 60,000) sent to /v1/batch in batches of 20,
 * round-robin over the sources, at CLUSTER_BENCH_RATE calls/s (default 2,000), open loop.
 *
 * Per phase: a warm-up (a batch per source, delivered), then an idle window (5 s, no load: the
 * workers' background polling, per node), then the measured window from the first load batch until
 * every call was delivered (the receiver counts distinct messageIds) and 1 s more for the last
 * job commits and log flushes. Per Redis node (each primary on the cluster), from INFO over the
 * window: the delta of used_cpu_user + used_cpu_sys and of INFO commandstats calls (commands run
 * by scripts included, as bench:pipeline counts) and of total_reads_processed (socket reads: how
 * many commands arrive per read tells how deep the clients' pipelines reach the node), divided by
 * the calls delivered; each primary's share of the commands (target: within ±20% of a third);
 * and the projected Redis ceilings in delivered calls/s: one node's 1e6 / µs per call, the
 * cluster's by the issue's formula (Σ over primaries of 1e6 / µs per call) and by the busiest
 * primary (min over primaries of 1e6 / µs per call, when the first primary would spend a whole
 * core; target ≥ 2.7× one node's). Here the three primaries and the services share one machine's
 * cores, which makes each Redis command cost more CPU than on a Redis with a core to itself; so a
 * third phase, "sharded, one process", runs the same load with the same shards on ONE
 * cluster-enabled redis-server holding every slot: the whole Redis work a call costs with shards
 * and cluster mode, without that contention. Split over the primaries as the cluster phase split
 * it, the busiest primary deciding, it gives the ceiling on dedicated hosts (the verdict). Where the work went: the keys each node holds after the run (sources'
 * dedupe keys, destinations' attempt logs, each shard's tag), and the commands per delivered call
 * of both phases side by side. Missed targets are reported, not an exit code; a call not delivered
 * is. Results: results/cluster-latest.json.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { distEntry, freePort, sleep, startPrivateRedis, startReceiver, startRedisCluster } from '@eventrelay/testkit';
import {
  FORMULAS,
  TARGET,
  ceilings,
  compareCommands,
  dedicatedHostsCeiling,
  evenSpread,
  nodeDelta,
  nodeFigures,
  shardSpread,
  sumCalls,
  type NodeDelta,
  type NodeFigures,
  type Spread,
} from './lib/cluster-report.js';
import { redisSnapshot } from './lib/detail.js';
import { ResourceSampler, connectRedis, infoField, runBench } from './lib/proc.js';
import { BENCH_DIR, envNumber, fmtFixed, fmtInt, machine, round, table, targetsLine, writeResult } from './lib/report.js';
import { sendBatchesOpenLoop } from './lib/drive.js';
import { STACK_SERVICES, destinationIdOf, startBenchStack, writeStackConfig } from './lib/stack.js';

const DEFAULT_CALLS = 60_000;
const CALLS = envNumber('CLUSTER_BENCH_CALLS', DEFAULT_CALLS, 1_000, 1_000_000);
const RATE = envNumber('CLUSTER_BENCH_RATE', 2_000, 100, 100_000);
const REPLICAS = envNumber('CLUSTER_BENCH_REPLICAS', 0, 0, 2);
const SOURCES = envNumber('CLUSTER_BENCH_SOURCES', 960, 1, 10_000);
const SHARDS = envNumber('CLUSTER_BENCH_SHARDS', 3, 1, 256);
const PRIMARIES = 3;
const BATCH = 20;
const IDLE_S = 5;
const SETTLE_S = 1;
const DRAIN_TIMEOUT_S = 150;
const HOME_TAG = 'bench-cluster';
const PREFIX = `{${HOME_TAG}}`;
const SECRET = 'cluster-bench-secret';
const writeKeyOf = (i: number) => `wk_cluster_bench_${String(i).padStart(4, '0')}_000000`;
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
const cleanups: (() => Promise<unknown>)[] = [];

/** The Redis of one phase, read per node. */
interface Target {
  readonly name: 'one_node' | 'sharded_one_process' | 'cluster';
  readonly label: string;
  readonly redisUrl: string;
  readonly env: Readonly<Record<string, string>>;
  readonly shards: number;
  /** The redis-server processes, for the CPU cross-check from /proc. */
  readonly processes: readonly { name: string; pid: number | undefined }[];
  read(): Promise<{ node: string; snapshot: Reading }[]>;
  keys(): Promise<{ node: string; keys: string[] }[]>;
}

/** What the receiver got in one phase. */
class Tally {
  warm = new Set<string>();
  load = new Set<string>();
  requests = 0;
  readonly perDestination = new Map<string, number>();
  add(path: string, messageId: string): void {
    this.requests++;
    const set = messageId.startsWith('warm-') ? this.warm : this.load;
    if (set.has(messageId)) return;
    set.add(messageId);
    if (set === this.load) this.perDestination.set(path, (this.perDestination.get(path) ?? 0) + 1);
  }
}

/** The current phase's; the receiver counts into it. */
let tally = new Tally();

async function main(): Promise<void> {
  const started = new Date();
  for (const svc of STACK_SERVICES)
    if (!existsSync(distEntry(svc)))
      throw new Error(`${path.relative(BENCH_DIR, distEntry(svc))} is missing: run pnpm exec tsc -b (pnpm bench:cluster does)`);
  const receiver = await startReceiver({
    keep: false,
    onRequest: (req) => tally.add(req.path, String(req.headers['x-eventrelay-message-id'])),
  });
  cleanups.push(() => receiver.close());
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cluster-bench-'));
  cleanups.push(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
  const base = receiver.url.replace(/\/hook$/, '');
  const configFile = path.join(dir, 'config.json');
  writeStackConfig(
    configFile,
    Array.from({ length: SOURCES }, (_, i) => writeKeyOf(i)),
    Array.from({ length: SOURCES }, (_, i) => `${base}/${destinationIdOf(i)}`),
    SECRET,
  );

  // Phase 1 node.
  const redisServer = await startPrivateRedis({ aof: false });
  cleanups.push(() => redisServer.stop());
  const single = connectRedis(redisServer.url);
  cleanups.push(() => Promise.resolve(single.disconnect()));
  const one = await runPhase(
    {
      name: 'one_node',
      label: '1 node',
      redisUrl: redisServer.url,
      env: { EVENTRELAY_SHARDS: '1' },
      shards: 1,
      processes: [{ name: 'redis', pid: redisServer.process()?.pid }],
      read: async () => [{ node: '1 node', snapshot: await readNode(single) }],
      keys: async () => [{ node: '1 node', keys: await scanKeys(single) }],
    },
    configFile,
  );
  single.disconnect();
  await redisServer.stop();

  // Phase sharded, one process: every shard on one cluster-enabled redis-server holding every slot.
  const busPort = await freePort();
  const shardedServer = await startPrivateRedis({
    aof: false,
    args: [
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      `nodes-${busPort}.conf`,
      '--cluster-port',
      String(busPort),
      '--cluster-announce-ip',
      '127.0.0.1',
    ],
  });
  cleanups.push(() => shardedServer.stop());
  const shardedClient = connectRedis(shardedServer.url);
  cleanups.push(() => Promise.resolve(shardedClient.disconnect()));
  await shardedClient.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
  await waitUntil(
    async () => /cluster_state:ok/.test(String(await shardedClient.call('CLUSTER', 'INFO'))),
    30,
    () => 'the one-process cluster did not reach cluster_state:ok',
  );
  const sharded = await runPhase(
    {
      name: 'sharded_one_process',
      label: `sharded, one process (${SHARDS} shards, cluster mode)`,
      redisUrl: shardedServer.url,
      env: { REDIS_CLUSTER_NODES: `127.0.0.1:${shardedServer.port}`, EVENTRELAY_SHARDS: String(SHARDS) },
      shards: SHARDS,
      processes: [{ name: 'redis', pid: shardedServer.process()?.pid }],
      read: async () => [{ node: 'sharded, one process', snapshot: await readNode(shardedClient) }],
      keys: async () => [{ node: 'sharded, one process', keys: await scanKeys(shardedClient) }],
    },
    configFile,
  );
  shardedClient.disconnect();
  await shardedServer.stop();

  // Phase cluster.
  log(`starting a Redis Cluster: ${PRIMARIES} primaries, ${REPLICAS} replica(s) each`);
  const cluster = await startRedisCluster({ primaries: PRIMARIES, replicasPerPrimary: REPLICAS });
  cleanups.push(() => cluster.stop());
  const labels = new Map((await cluster.primaries()).map((n, i) => [n.port, `primary ${i + 1} :${n.port}`]));
  const labelOf = (port: number) => labels.get(port) ?? `node :${port}`;
  const [seed] = cluster.seeds.split(',');
  const clustered = await runPhase(
    {
      name: 'cluster',
      label: `cluster (${PRIMARIES} primaries, ${REPLICAS} replicas each, ${SHARDS} shards)`,
      redisUrl: `redis://${seed}`,
      env: { REDIS_CLUSTER_NODES: cluster.seeds, EVENTRELAY_SHARDS: String(SHARDS) },
      shards: SHARDS,
      processes: cluster.nodes.map((n) => ({ name: `redis :${n.port}`, pid: n.pid })),
      read: async () =>
        (await cluster.eachPrimary(async (client, node) => ({ node: labelOf(node.port), snapshot: await readNode(client) }))).sort((a, b) =>
          a.node.localeCompare(b.node),
        ),
      keys: async () => cluster.eachPrimary(async (client, node) => ({ node: labelOf(node.port), keys: await scanKeys(client) })),
    },
    configFile,
  );
  await cluster.stop();

  // The verdicts.
  const oneUsec = one.nodes[0]?.cpu_usec_per_call ?? 0;
  const ceiling = ceilings(
    oneUsec,
    clustered.nodes.map((n) => n.cpu_usec_per_call),
  );
  const ceilingLessIdle = ceilings(
    one.nodes[0]?.cpu_usec_per_call_less_idle ?? 0,
    clustered.nodes.map((n) => n.cpu_usec_per_call_less_idle ?? 0),
  );
  const shares = evenSpread(clustered.nodes.map((n) => n.command_share));
  const dedicated = dedicatedHostsCeiling(
    oneUsec,
    sharded.nodes[0]?.cpu_usec_per_call ?? 0,
    clustered.nodes.map((n) => n.cpu_share),
  );
  const cpuShares = evenSpread(clustered.nodes.map((n) => n.cpu_share));
  const commands = compareCommands(
    { calls: sumCalls(one.window), delivered: one.delivered },
    { calls: sumCalls(clustered.window), delivered: clustered.delivered },
  );
  const sum = (nodes: readonly NodeFigures[], f: (n: NodeFigures) => number) =>
    round(
      nodes.map(f).reduce((x, y) => x + y, 0),
      3,
    );
  const totalsOf = (nodes: readonly NodeFigures[]) => {
    const usec = sum(nodes, (n) => n.cpu_usec_per_call);
    const commands = sum(nodes, (n) => n.commands_per_call);
    const reads = sum(nodes, (n) => n.reads_per_call);
    return {
      cpu_usec_per_call: usec,
      commands_per_call: commands,
      reads_per_call: reads,
      commands_per_read: reads > 0 ? round(commands / reads, 2) : null,
      cpu_usec_per_command: commands > 0 ? round(usec / commands, 3) : null,
    };
  };
  // Σ over the phase's nodes: the Redis work one delivered call costs in all.
  const totals = { one_node: totalsOf(one.nodes), sharded_one_process: totalsOf(sharded.nodes), cluster: totalsOf(clustered.nodes) };
  const totalsLine = (name: string, t: ReturnType<typeof totalsOf>) =>
    `${name} ${fmtFixed(t.cpu_usec_per_call, 1)} µs, ${fmtFixed(t.commands_per_call, 2)} commands in ${fmtFixed(t.reads_per_call, 2)} socket reads, ` +
    `${fmtFixed(t.cpu_usec_per_command, 2)} µs per command`;

  process.stdout.write(
    `\nRedis commands per delivered call, both phases (summed over nodes; the largest differences first)\n` +
      table(
        ['command', '1 node', 'cluster', 'difference'],
        commands.map((c) => [
          c.command,
          fmtFixed(c.a_per_call, 3),
          fmtFixed(c.b_per_call, 3),
          `${c.difference >= 0 ? '+' : ''}${fmtFixed(c.difference, 3)}`,
        ]),
      ) +
      `\n\nRedis work per delivered call, all nodes: ${totalsLine('1 node', totals.one_node)}; ${totalsLine('sharded, one process', totals.sharded_one_process)}; ${totalsLine('cluster (Σ over primaries)', totals.cluster)}\n\n` +
      table(
        ['projected Redis ceiling (delivered calls/s)', 'calls/s', '× 1 node'],
        [
          ['1 node: 1e6 / µs per call', fmtInt(ceiling.one_node), '1.00'],
          ['dedicated hosts: 1e6 / (busiest CPU share × sharded µs) (verdict)', fmtInt(dedicated.ceiling), fmtFixed(dedicated.ratio, 2)],
          ['this machine, busiest primary: min_i 1e6 / µs_i', fmtInt(ceiling.cluster_min), fmtFixed(ceiling.ratio_min, 2)],
          ["cluster, the issue's sum: Σ_i 1e6 / µs_i", fmtInt(ceiling.cluster_sum), fmtFixed(ceiling.ratio_sum, 2)],
          ['(informational) spread evenly: 3 × 1e6 / Σ_i µs_i', fmtInt(ceiling.cluster_even), fmtFixed(ceiling.ratio_even, 2)],
          [
            '(informational) busiest primary, idle background left out',
            fmtInt(ceilingLessIdle.cluster_min),
            fmtFixed(ceilingLessIdle.ratio_min, 2),
          ],
        ],
      ) +
      `\n\nprimaries' command shares ${clustered.nodes.map((n) => `${fmtFixed(n.command_share * 100, 1)}%`).join(', ')} ` +
      `(even ${fmtFixed(shares.even_share * 100, 1)}%, allowed ${fmtFixed(shares.allowed[0] * 100, 1)}-${fmtFixed(shares.allowed[1] * 100, 1)}%; ` +
      `CPU shares ${clustered.nodes.map((n) => `${fmtFixed(n.cpu_share * 100, 1)}%`).join(', ')})\n` +
      `the issue's sum formula gives ${fmtFixed(ceiling.ratio_sum, 2)}× (${ceiling.met_sum ? 'would meet' : 'would miss'} ≥ ${TARGET.ceilingRatio}×, ` +
      `but it counts each primary as if it alone carried the whole load; not the verdict)\n` +
      targetsLine({
        [`command shares within ±${TARGET.shareTolerance * 100}% of a third`]: shares.met,
        [`ceiling on dedicated hosts ≥ ${TARGET.ceilingRatio}× one node`]: dedicated.met,
      }).line +
      '\n',
  );

  const complete = CALLS >= DEFAULT_CALLS && REPLICAS === 0;
  const result = {
    started: started.toISOString(),
    machine: machine(),
    settings: {
      calls: CALLS,
      rate_calls_per_s: RATE,
      batch_size: BATCH,
      sources: SOURCES,
      destinations: SOURCES,
      prefix: PREFIX,
      one_node: { shards: 1, aof: false },
      sharded_one_process: { shards: SHARDS, aof: false, cluster_enabled: true, slots: 'all 16384 on the one node' },
      cluster: {
        primaries: PRIMARIES,
        replicas_per_primary: REPLICAS,
        shards: SHARDS,
        why_replicas:
          REPLICAS === 0
            ? 'none: a replica adds replication work to its primary, and the figure compared is CPU per call'
            : 'set by CLUSTER_BENCH_REPLICAS',
      },
      idle_window_s: IDLE_S,
      settle_s: SETTLE_S,
      redis_version: one.redisVersion,
    },
    formulas: FORMULAS,
    phases: { one_node: one.report, sharded_one_process: sharded.report, cluster: clustered.report },
    totals_per_delivered_call: totals,
    commands_per_delivered_call: commands,
    ceilings: {
      ...ceiling,
      formulas: {
        one_node: FORMULAS.one_node,
        cluster_sum: FORMULAS.cluster_sum,
        cluster_min: FORMULAS.cluster_min,
        cluster_even: FORMULAS.cluster_even,
      },
    },
    ceilings_less_idle_informational: ceilingLessIdle,
    ceiling_dedicated_hosts: { ...dedicated, formula: FORMULAS.dedicated_hosts },
    command_shares: shares,
    cpu_shares_informational: cpuShares,
    verdicts: {
      command_shares_even: shares.met,
      ceiling_ratio_dedicated_hosts: dedicated.met,
      ceiling_ratio_busiest_primary_this_machine: ceiling.met_min,
      ceiling_ratio_issue_sum_formula: ceiling.met_sum,
      judged_by:
        'the ceiling on dedicated hosts (dedicated_hosts); the busiest primary on this shared machine and the sum formula are reported beside it',
    },
  };
  const written = writeResult('cluster-latest.json', 'cluster', started, result, complete);
  log(`wrote ${written.join(', ')}`);
}

interface Phase {
  readonly nodes: NodeFigures[];
  readonly window: NodeDelta[];
  readonly delivered: number;
  readonly redisVersion: string;
  readonly report: Record<string, unknown>;
}

async function runPhase(target: Target, configFile: string): Promise<Phase> {
  tally = new Tally();
  log(`phase ${target.label}: starting the services`);
  const stack = await startBenchStack({
    redisUrl: target.redisUrl,
    prefix: PREFIX,
    configFile,
    adminToken: 'cluster-bench-admin-token-0123456789',
    logLevel: 'warn',
    env: target.env,
    deliveries: 1,
  });
  const stop = async () => stack.stop();
  cleanups.push(stop);
  const ingest = stack.url('ingest');

  // Warm-up: a batch per source, so every shard's queues and scripts are in use before the window.
  await sendBatches(ingest, 'warm', SOURCES, RATE / BATCH);
  await waitUntil(
    () => tally.warm.size >= SOURCES * BATCH,
    60,
    () => `warm-up: ${tally.warm.size} of ${SOURCES * BATCH} delivered`,
  );
  await sleep(2000);

  const idleBefore = await target.read();
  await sleep(IDLE_S * 1000);
  const before = await target.read();
  const idleSeconds = IDLE_S;

  const batches = Math.ceil(CALLS / BATCH);
  const sent = batches * BATCH;
  const sampler = new ResourceSampler(() => [...stack.processes(), ...target.processes, { name: 'bench', pid: process.pid }]);
  sampler.mark();
  const t0 = performance.now();
  log(`phase ${target.label}: ${sent} calls at ${RATE} calls/s over ${SOURCES} sources`);
  await sendBatches(ingest, 'load', batches, RATE / BATCH);
  const sendS = (performance.now() - t0) / 1000;
  await waitUntil(
    () => tally.load.size >= sent,
    DRAIN_TIMEOUT_S,
    () => `${tally.load.size} of ${sent} calls delivered`,
  );
  const deliveredS = (performance.now() - t0) / 1000;
  await sleep(SETTLE_S * 1000);
  const after = await target.read();
  const seconds = (performance.now() - t0) / 1000;
  const processCpu = sampler.cpuPct();
  const delivered = tally.load.size;
  const keys = await target.keys();
  await stack.stop();
  cleanups.splice(cleanups.indexOf(stop), 1);

  const deltas = (from: typeof before, to: typeof after) =>
    to.map(({ node, snapshot }) => {
      const b = from.find((r) => r.node === node);
      if (!b) throw new Error(`${node} was not read at the start of the window`);
      return nodeDelta(node, b.snapshot, snapshot);
    });
  const window = deltas(before, after);
  const idle = deltas(idleBefore, before);
  const nodes = nodeFigures({ window, delivered, seconds, idle, idleSeconds });
  const spread = shardSpread(HOME_TAG, keys);
  const perDestination = [...tally.perDestination.values()];
  const duplicates = tally.requests - tally.warm.size - tally.load.size;
  printPhase(target, nodes, spread, { delivered, sendS, deliveredS, seconds, duplicates });
  if (spread.conflicts.length > 0)
    log(`phase ${target.label}: keys of one shard, source or destination on two places: ${spread.conflicts.join('; ')}`);

  return {
    nodes,
    window,
    delivered,
    redisVersion: after[0]?.snapshot.version ?? 'unknown',
    report: {
      label: target.label,
      shards: target.shards,
      sent,
      delivered,
      duplicates,
      delivered_per_destination: {
        min: Math.min(...perDestination),
        max: Math.max(...perDestination),
        destinations: perDestination.length,
      },
      send_s: round(sendS, 1),
      all_delivered_after_s: round(deliveredS, 1),
      window_s: round(seconds, 1),
      delivered_calls_per_s: round(delivered / deliveredS, 0),
      nodes,
      spread,
      process_cpu_pct_of_core: processCpu,
      by_command: Object.fromEntries(
        Object.entries(sumCalls(window))
          .sort(([, a], [, b]) => b - a)
          .map(([k, n]) => [k, round(n / delivered, 4)]),
      ),
    },
  };
}

function printPhase(
  target: Target,
  nodes: readonly NodeFigures[],
  spread: Spread,
  o: { delivered: number; sendS: number; deliveredS: number; seconds: number; duplicates: number },
): void {
  const byNode = new Map(spread.per_node.map((p) => [p.node, p]));
  process.stdout.write(
    `\n${target.label}: ${fmtInt(o.delivered)} calls delivered ${fmtFixed(o.deliveredS, 1)} s after the first was sent ` +
      `(sending took ${fmtFixed(o.sendS, 1)} s; ${o.duplicates} duplicates); window ${fmtFixed(o.seconds, 1)} s\n` +
      table(
        [
          'node',
          'CPU % core',
          'µs/call',
          'cmds/call',
          'reads/call',
          'cmds/read',
          'cmd share',
          'CPU share',
          '1e6/µs',
          'idle cmds/s',
          'idle CPU %',
          'shards',
          'sources',
          'dests',
        ],
        nodes.map((n) => {
          const p = byNode.get(n.node);
          return [
            n.node,
            fmtFixed(n.cpu_pct_of_core, 1),
            fmtFixed(n.cpu_usec_per_call, 2),
            fmtFixed(n.commands_per_call, 2),
            fmtFixed(n.reads_per_call, 2),
            fmtFixed(n.commands_per_read, 2),
            `${fmtFixed(n.command_share * 100, 1)}%`,
            `${fmtFixed(n.cpu_share * 100, 1)}%`,
            fmtInt(n.ceiling_calls_per_s),
            fmtInt(n.idle_commands_per_s),
            fmtFixed(n.idle_cpu_pct_of_core, 2),
            String(p?.shards ?? '-'),
            String(p?.sources ?? '-'),
            String(p?.destinations ?? '-'),
          ];
        }),
      ) +
      '\n' +
      (spread.per_shard.length > 1
        ? table(
            ['shard', ...spread.per_shard.map((p) => String(p.shard))],
            [
              ['primary', ...spread.per_shard.map((p) => p.node.replace(/^primary (\d+).*$/, '$1'))],
              ['sources', ...spread.per_shard.map((p) => String(p.sources))],
              ['destinations', ...spread.per_shard.map((p) => String(p.destinations))],
            ],
          ) + '\n'
        : ''),
  );
}

/** Batches of 20 track calls, batch i from source i % SOURCES, `perSecond` batches a second (open loop). */
function sendBatches(ingestUrl: string, tag: 'warm' | 'load', count: number, perSecond: number): Promise<void> {
  return sendBatchesOpenLoop(ingestUrl, count, perSecond, (i) => ({
    writeKey: writeKeyOf(i % SOURCES),
    calls: Array.from({ length: BATCH }, (_, k) => ({
      type: 'track',
      messageId: `${tag}-${i}-${k}`,
      userId: `u-${i}-${k}`,
      event: 'Cluster Bench',
      properties: { i, k },
    })),
  }));
}

async function waitUntil(done: () => boolean | Promise<boolean>, timeoutS: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutS * 1000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutS} s: ${what()}`);
    await sleep(100);
  }
}

type Reading = Awaited<ReturnType<typeof readNode>>;

/** A node's counters now: INFO's CPU, commandstats and version (redisSnapshot), and its socket reads. */
async function readNode(client: Redis) {
  const snapshot = await redisSnapshot(client);
  const reads = Number(infoField(await client.info('stats'), 'total_reads_processed') ?? NaN);
  return { ...snapshot, reads };
}

/** Every key of the bench's prefix on one node (SCAN, after the window: not counted). */
async function scanKeys(client: Redis): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await client.scan(cursor, 'MATCH', `{${HOME_TAG}*`, 'COUNT', 2000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  return keys;
}

runBench(
  main,
  async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  },
  420,
);
