/** The cluster bench's arithmetic: per node figures, evenness, ceilings, command comparison and the spread of keys. */
import {
  ceilings,
  compareCommands,
  dedicatedHostsCeiling,
  evenSpread,
  nodeDelta,
  nodeFigures,
  shardSpread,
  sumCalls,
  type NodeDelta,
} from './cluster-report';

const counters = (cpuSeconds: number, calls: Record<string, number>, reads = 0) => ({
  cpuSeconds,
  reads,
  commands: new Map(Object.entries(calls).map(([k, n]) => [k, { calls: n }])),
});
const delta = (node: string, cpuUsec: number, commands: number): NodeDelta => ({
  node,
  cpuUsec,
  calls: { evalsha: commands },
  commands,
  reads: commands / 4,
});

describe('nodeDelta', () => {
  it('takes the CPU in µs and each command’s calls between two readings, new commands included and unchanged ones left out', () => {
    const d = nodeDelta('n', counters(1.5, { evalsha: 10, info: 2 }, 5), counters(1.75, { evalsha: 30, info: 2, 'client|setname': 1 }, 12));
    expect(d.cpuUsec).toBeCloseTo(250_000);
    expect(d.calls).toEqual({ evalsha: 20, 'client|setname': 1 });
    expect(d.commands).toBe(21);
    expect(d.reads).toBe(7);
  });
});

describe('nodeFigures', () => {
  it('divides each node’s CPU and commands by the calls delivered, and gives shares, % of a core and the node’s ceiling', () => {
    const [a, b] = nodeFigures({
      window: [delta('a', 3_000_000, 300_000), delta('b', 1_000_000, 100_000)],
      delivered: 100_000,
      seconds: 20,
    });
    expect(a).toMatchObject({
      cpu_usec_per_call: 30,
      commands_per_call: 3,
      reads_per_call: 0.75,
      commands_per_read: 4,
      command_share: 0.75,
      cpu_share: 0.75,
      cpu_pct_of_core: 15,
    });
    expect(a?.ceiling_calls_per_s).toBe(33_333);
    expect(b).toMatchObject({ cpu_usec_per_call: 10, command_share: 0.25, ceiling_calls_per_s: 100_000, idle_commands_per_s: null });
  });

  it('reports the idle background per second and the µs per call without it', () => {
    const [a] = nodeFigures({
      window: [delta('a', 2_000_000, 1000)],
      delivered: 10_000,
      seconds: 10,
      idle: [delta('a', 500_000, 500)],
      idleSeconds: 5,
    });
    // 100 ms of CPU a second idle: 1 s of the window's 2 s is background.
    expect(a).toMatchObject({
      idle_commands_per_s: 100,
      idle_cpu_pct_of_core: 10,
      cpu_usec_per_call: 200,
      cpu_usec_per_call_less_idle: 100,
    });
  });

  it('refuses a window where nothing was delivered', () => {
    expect(() => nodeFigures({ window: [delta('a', 1, 1)], delivered: 0, seconds: 1 })).toThrow(/no call was delivered/);
  });
});

describe('evenSpread', () => {
  it('meets the target when every share is within ±20% of an even third', () => {
    expect(evenSpread([0.3, 0.33, 0.37])).toMatchObject({ met: true, even_share: 0.3333, allowed: [0.2667, 0.4] });
  });

  it('misses it when one primary is more than 20% off, and says by how much', () => {
    const s = evenSpread([0.2, 0.4, 0.4]);
    expect(s.met).toBe(false);
    expect(s.worst_deviation).toBeCloseTo(0.4);
  });

  it('counts exactly 20% off as within', () => {
    expect(evenSpread([0.4, 0.3, 0.3]).met).toBe(true);
  });
});

describe('ceilings', () => {
  it('an even cluster: the busiest-primary bound is about 3× one node, the issue’s sum about 9×', () => {
    const c = ceilings(30, [10, 10, 10]);
    expect(c).toMatchObject({ one_node: 33_333, cluster_min: 100_000, cluster_sum: 300_000, ratio_min: 3, ratio_sum: 9 });
    expect(c.met_min).toBe(true);
    expect(c.met_sum).toBe(true);
  });

  it('judges by the busiest primary: an uneven cluster can meet the sum formula and miss the bound', () => {
    const c = ceilings(30, [20, 6, 6]);
    expect(c.cluster_min).toBe(50_000);
    expect(c.ratio_min).toBe(1.5);
    expect(c.met_min).toBe(false);
    expect(c.ratio_sum).toBe(11.5);
    // 32 µs in all over 3 primaries: evenly spread, 3 × 1e6 / 32, against 1e6 / 30.
    expect(c.cluster_even).toBe(93_750);
    expect(c.ratio_even).toBe(2.813);
    expect(c.met_sum).toBe(true);
  });

  it('a cluster doing more Redis work per call in all misses the target even when spread evenly', () => {
    // 3 primaries spending 15 µs each: 45 µs in all against one node's 30.
    const c = ceilings(30, [15, 15, 15]);
    expect(c.ratio_min).toBe(2);
    expect(c.ratio_even).toBe(2);
    expect(c.met_min).toBe(false);
  });

  it('gives nulls and no verdict met for a node that used no CPU', () => {
    expect(ceilings(30, [10, 0, 10])).toMatchObject({ cluster_min: null, ratio_min: null, met_min: false, met_sum: false });
    expect(ceilings(0, [10, 10, 10])).toMatchObject({ one_node: null, met_min: false });
  });
});

describe('sumCalls and compareCommands', () => {
  it('sums calls over nodes and lists the per-call differences, largest first', () => {
    const cluster = sumCalls([
      { node: 'a', cpuUsec: 0, commands: 0, reads: 0, calls: { evalsha: 100, multi: 50 } },
      { node: 'b', cpuUsec: 0, commands: 0, reads: 0, calls: { evalsha: 100, cluster: 10 } },
    ]);
    expect(cluster).toEqual({ evalsha: 200, multi: 50, cluster: 10 });
    const rows = compareCommands({ calls: { evalsha: 100, multi: 50, info: 1 }, delivered: 100 }, { calls: cluster, delivered: 100 }, 3);
    expect(rows).toEqual([
      { command: 'evalsha', a_per_call: 1, b_per_call: 2, difference: 1 },
      { command: 'cluster', a_per_call: 0, b_per_call: 0.1, difference: 0.1 },
      { command: 'info', a_per_call: 0.01, b_per_call: 0, difference: -0.01 },
    ]);
  });
});

describe('shardSpread', () => {
  it('places shards, sources (dedupe keys) and destinations (attempt logs) on the nodes their keys were found on', () => {
    const s = shardSpread('bench', [
      {
        node: 'p1',
        keys: [
          '{bench.0.3}:dedupe:src-0:m1',
          '{bench.0.3}:dedupe:src-0:m2',
          '{bench.1.0}:attempts:dest-1',
          '{bench.1.0}:attempts:dest-1:seq',
          '{bench.1.0}:deliver:meta',
        ],
      },
      { node: 'p2', keys: ['{bench.2.7}:dedupe:src-1:m3', '{bench.2.7}:attempts:dest-0', '{other.4.1}:dedupe:src-9:x', 'plain:key'] },
    ]);
    expect(s.shards).toEqual({ '0': 'p1', '1': 'p1', '2': 'p2' });
    expect(s.sources).toEqual({ 'src-0': { shard: 0, node: 'p1' }, 'src-1': { shard: 2, node: 'p2' } });
    expect(s.destinations).toEqual({ 'dest-0': { shard: 2, node: 'p2' }, 'dest-1': { shard: 1, node: 'p1' } });
    expect(s.per_node).toEqual([
      { node: 'p1', shards: 2, sources: 1, destinations: 1 },
      { node: 'p2', shards: 1, sources: 1, destinations: 1 },
    ]);
    expect(s.per_shard).toEqual([
      { shard: 0, node: 'p1', sources: 1, destinations: 0 },
      { shard: 1, node: 'p1', sources: 0, destinations: 1 },
      { shard: 2, node: 'p2', sources: 1, destinations: 1 },
    ]);
    expect(s.conflicts).toEqual([]);
  });

  it('reads the home tag as shard 0 with one shard', () => {
    const s = shardSpread('bench', [{ node: 'n', keys: ['{bench}:dedupe:src-0:m', '{bench}:attempts:dest-0', '{bench}:route:wait'] }]);
    expect(s.shards).toEqual({ '0': 'n' });
    expect(s.per_node).toEqual([{ node: 'n', shards: 1, sources: 1, destinations: 1 }]);
  });

  it('reports a source whose keys are on two shards', () => {
    const s = shardSpread('bench', [{ node: 'n', keys: ['{bench.0.1}:dedupe:src-0:a', '{bench.1.1}:dedupe:src-0:b'] }]);
    expect(s.conflicts).toEqual(['source src-0 on 0@n, 1@n']);
  });
});

describe('dedicatedHostsCeiling', () => {
  it('splits the sharded phase’s work per call by the busiest primary’s share', () => {
    // One node: 60 µs a call (16,667 calls/s). Sharded: 62 µs a call in all; the busiest primary does 34% of it.
    const c = dedicatedHostsCeiling(60, 62, [0.34, 0.33, 0.33]);
    expect(c.busiest_share).toBe(0.34);
    expect(c.ceiling).toBe(Math.round(1e6 / (0.34 * 62)));
    expect(c.ratio).toBeCloseTo(60 / (0.34 * 62), 3);
    expect(c.met).toBe(true);
  });

  it('misses the target when the work per call grows or the spread is uneven', () => {
    expect(dedicatedHostsCeiling(60, 90, [1 / 3, 1 / 3, 1 / 3]).met).toBe(false);
    expect(dedicatedHostsCeiling(60, 60, [0.5, 0.25, 0.25]).ratio).toBe(2);
  });

  it('gives null without figures', () => {
    expect(dedicatedHostsCeiling(0, 60, [0.5, 0.5]).ceiling).toBeNull();
    expect(dedicatedHostsCeiling(60, 60, []).ratio).toBeNull();
  });
});
