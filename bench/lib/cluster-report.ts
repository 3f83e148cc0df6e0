/**
 * What `pnpm bench:cluster` concludes from its readings (pure): each Redis node's CPU and commands
 * over the measured window per delivered call, each primary's share of the commands and whether
 * the shares are even, the projected ceilings (with the formula each one uses) and their verdicts,
 * the commands per delivered call of the two phases side by side, and the spread of the sources',
 * destinations' and shards' keys over the nodes.
 */
import { round } from './report.js';

export const TARGET = {
  /** The projected ceiling of 3 primaries must be at least this many times one node's. */
  ceilingRatio: 2.7,
  /** Each primary's share of the commands within ±20% of an even share. */
  shareTolerance: 0.2,
} as const;

export const FORMULAS = {
  cpu_usec_per_call: "node's (used_cpu_user + used_cpu_sys) delta over the window, in µs / calls delivered in the window (all nodes')",
  commands_per_call: "node's sum of INFO commandstats calls over the window (commands run by scripts included) / calls delivered",
  command_share: "node's commands / the commands of every node of the phase",
  node_ceiling: '1e6 / cpu_usec_per_call: the delivered calls/s at which this node would spend one core',
  one_node: '1e6 / cpu_usec_per_call of the single node',
  cluster_sum:
    "Σ over primaries of 1e6 / cpu_usec_per_call (the issue's formula; it counts each primary as if it alone served the whole load)",
  cluster_min: 'min over primaries of 1e6 / cpu_usec_per_call (the busiest primary saturates first: the bound the verdict uses)',
  cluster_even:
    'primaries × 1e6 / Σ over primaries of cpu_usec_per_call (informational: the busiest-primary bound had the work been spread evenly; it differs from one node only by the Redis work per call in all)',
  dedicated_hosts:
    "1e6 / (max over primaries of the cluster phase's CPU share × cpu_usec_per_call of the sharded phase): the busiest primary's part of the Redis work a call costs with the shards and cluster mode, measured on one Redis process that had a core to itself, as it would be with each primary on a host of its own",
} as const;

/**
 * The ceiling on dedicated hosts (FORMULAS.dedicated_hosts): the Redis work per call of the
 * sharded phase (every shard, cluster mode on, one process) split over the primaries as the cluster
 * phase split it, the busiest primary deciding. Null when a figure is missing.
 */
export function dedicatedHostsCeiling(
  oneNodeUsecPerCall: number,
  shardedUsecPerCall: number,
  clusterShares: readonly number[],
  target: number = TARGET.ceilingRatio,
) {
  if (!(oneNodeUsecPerCall > 0 && shardedUsecPerCall > 0 && clusterShares.length > 0))
    return { ceiling: null, ratio: null, busiest_share: null, target, met: false };
  const busiest = Math.max(...clusterShares);
  const ceiling = 1e6 / (busiest * shardedUsecPerCall);
  const ratio = ceiling / (1e6 / oneNodeUsecPerCall);
  return { ceiling: Math.round(ceiling), ratio: round(ratio, 3), busiest_share: round(busiest, 4), target, met: ratio >= target };
}

/** Cumulative counters of one node at one moment (a redisSnapshot, or any reading with these fields). */
export interface Counters {
  readonly cpuSeconds: number;
  readonly commands: ReadonlyMap<string, { readonly calls: number }>;
  /** INFO stats total_reads_processed: socket reads that brought requests (several pipelined commands share one). */
  readonly reads: number;
}

/** What one node did between two readings. */
export interface NodeDelta {
  readonly node: string;
  readonly cpuUsec: number;
  /** Calls per command name (INFO commandstats names, e.g. `evalsha`, `client|setname`). */
  readonly calls: Readonly<Record<string, number>>;
  readonly commands: number;
  readonly reads: number;
}

export function nodeDelta(node: string, before: Counters, after: Counters): NodeDelta {
  const calls: Record<string, number> = {};
  let commands = 0;
  for (const [name, { calls: n }] of after.commands) {
    const d = n - (before.commands.get(name)?.calls ?? 0);
    if (d <= 0) continue;
    calls[name] = d;
    commands += d;
  }
  const cpuUsec = Math.max(0, (after.cpuSeconds - before.cpuSeconds) * 1e6);
  return { node, cpuUsec, calls, commands, reads: Math.max(0, after.reads - before.reads) };
}

export interface NodeFigures {
  readonly node: string;
  readonly cpu_usec: number;
  readonly commands: number;
  /** CPU used over the window, % of one core. */
  readonly cpu_pct_of_core: number;
  readonly cpu_usec_per_call: number;
  readonly commands_per_call: number;
  /** Socket reads per delivered call, and commands per read (how deep the clients' pipelines arrive). */
  readonly reads_per_call: number;
  readonly commands_per_read: number | null;
  readonly command_share: number;
  readonly cpu_share: number;
  /** 1e6 / cpu_usec_per_call, delivered calls/s; null when the node used no CPU. */
  readonly ceiling_calls_per_s: number | null;
  /** The node's idle background (measured with no load), per second. */
  readonly idle_commands_per_s: number | null;
  readonly idle_cpu_pct_of_core: number | null;
  /** cpu_usec_per_call less the idle background's CPU over the window (informational: not what the verdict uses). */
  readonly cpu_usec_per_call_less_idle: number | null;
}

/**
 * Per node figures of one phase: `window` is the measured window's deltas (`seconds` long, `delivered`
 * calls delivered), `idle` the same nodes' deltas over `idleSeconds` with no load (optional).
 */
export function nodeFigures(o: {
  window: readonly NodeDelta[];
  delivered: number;
  seconds: number;
  idle?: readonly NodeDelta[];
  idleSeconds?: number;
}): NodeFigures[] {
  if (!(o.delivered > 0)) throw new RangeError(`no call was delivered: nothing to divide by`);
  if (!(o.seconds > 0)) throw new RangeError(`the window must last, not ${o.seconds} s`);
  const allCommands = o.window.reduce((n, d) => n + d.commands, 0);
  const allCpu = o.window.reduce((n, d) => n + d.cpuUsec, 0);
  return o.window.map((d) => {
    const idle = o.idle?.find((i) => i.node === d.node);
    const idleS = o.idleSeconds ?? 0;
    const idleCpuPerS = idle && idleS > 0 ? idle.cpuUsec / idleS : null;
    const perCall = d.cpuUsec / o.delivered;
    return {
      node: d.node,
      cpu_usec: Math.round(d.cpuUsec),
      commands: d.commands,
      cpu_pct_of_core: round((d.cpuUsec / 1e6 / o.seconds) * 100, 1),
      cpu_usec_per_call: round(perCall, 3),
      commands_per_call: round(d.commands / o.delivered, 3),
      reads_per_call: round(d.reads / o.delivered, 3),
      commands_per_read: d.reads > 0 ? round(d.commands / d.reads, 2) : null,
      command_share: allCommands > 0 ? round(d.commands / allCommands, 4) : 0,
      cpu_share: allCpu > 0 ? round(d.cpuUsec / allCpu, 4) : 0,
      ceiling_calls_per_s: perCall > 0 ? Math.round(1e6 / perCall) : null,
      idle_commands_per_s: idle && idleS > 0 ? round(idle.commands / idleS, 1) : null,
      idle_cpu_pct_of_core: idleCpuPerS === null ? null : round((idleCpuPerS / 1e6) * 100, 2),
      cpu_usec_per_call_less_idle: idleCpuPerS === null ? null : round(Math.max(0, d.cpuUsec - idleCpuPerS * o.seconds) / o.delivered, 3),
    };
  });
}

/** Whether every share lies within ±tolerance of an even share (1 / shares.length). */
export function evenSpread(shares: readonly number[], tolerance: number = TARGET.shareTolerance) {
  if (shares.length === 0) throw new RangeError('no shares to judge');
  const even = 1 / shares.length;
  const worst = Math.max(...shares.map((s) => Math.abs(s / even - 1)));
  return {
    even_share: round(even, 4),
    allowed: [round(even * (1 - tolerance), 4), round(even * (1 + tolerance), 4)] as const,
    /** The largest |share / even share - 1|. */
    worst_deviation: round(worst, 4),
    met: worst <= tolerance + 1e-9,
  };
}

/**
 * The projected Redis ceilings in delivered calls/s from each node's CPU µs per delivered call
 * (FORMULAS): one node's, the cluster's by the sum and by the busiest primary, and each
 * cluster figure against one node's. A non-positive µs figure (a node that did nothing) gives null.
 */
export function ceilings(oneNodeUsecPerCall: number, clusterUsecPerCall: readonly number[], target: number = TARGET.ceilingRatio) {
  const valid = oneNodeUsecPerCall > 0 && clusterUsecPerCall.length > 0 && clusterUsecPerCall.every((c) => c > 0);
  if (!valid)
    return {
      one_node: null,
      cluster_sum: null,
      cluster_min: null,
      cluster_even: null,
      ratio_sum: null,
      ratio_min: null,
      ratio_even: null,
      target,
      met_min: false,
      met_sum: false,
    };
  const one = 1e6 / oneNodeUsecPerCall;
  const each = clusterUsecPerCall.map((c) => 1e6 / c);
  const sum = each.reduce((a, b) => a + b, 0);
  const min = Math.min(...each);
  const even = (clusterUsecPerCall.length * 1e6) / clusterUsecPerCall.reduce((a, b) => a + b, 0);
  return {
    one_node: Math.round(one),
    cluster_sum: Math.round(sum),
    cluster_min: Math.round(min),
    cluster_even: Math.round(even),
    ratio_sum: round(sum / one, 3),
    ratio_min: round(min / one, 3),
    ratio_even: round(even / one, 3),
    target,
    /** The verdict: the busiest-primary bound at least `target` times one node's ceiling. */
    met_min: min / one >= target,
    /** The sum formula against the same target (reported, not the verdict). */
    met_sum: sum / one >= target,
  };
}

/** Calls per command name summed over nodes. */
export function sumCalls(deltas: readonly NodeDelta[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of deltas) for (const [name, n] of Object.entries(d.calls)) out[name] = (out[name] ?? 0) + n;
  return out;
}

/** Commands per delivered call of phase a and phase b side by side, the largest differences first. */
export function compareCommands(
  a: { calls: Readonly<Record<string, number>>; delivered: number },
  b: { calls: Readonly<Record<string, number>>; delivered: number },
  top = 15,
): { command: string; a_per_call: number; b_per_call: number; difference: number }[] {
  const names = new Set([...Object.keys(a.calls), ...Object.keys(b.calls)]);
  return [...names]
    .map((command) => {
      const pa = (a.calls[command] ?? 0) / a.delivered;
      const pb = (b.calls[command] ?? 0) / b.delivered;
      return { command, a_per_call: round(pa, 4), b_per_call: round(pb, 4), difference: round(pb - pa, 4), raw: Math.abs(pb - pa) };
    })
    .sort((x, y) => y.raw - x.raw || x.command.localeCompare(y.command))
    .slice(0, top)
    .map(({ raw: _raw, ...row }) => row);
}

/** The text inside a key's first non-empty {…}, as Redis Cluster reads it. */
function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

export interface Spread {
  /** Shard index → the node its keys were found on (a shard seen on two nodes is listed under both, and counted a conflict). */
  readonly shards: Readonly<Record<string, string>>;
  readonly sources: Readonly<Record<string, { shard: number; node: string }>>;
  readonly destinations: Readonly<Record<string, { shard: number; node: string }>>;
  readonly per_node: readonly { node: string; shards: number; sources: number; destinations: number }[];
  /** Every shard seen, in order, with its node and how many sources and destinations it holds. */
  readonly per_shard: readonly { shard: number; node: string; sources: number; destinations: number }[];
  /** Shards, sources or destinations whose keys were found on more than one node or shard (should be none). */
  readonly conflicts: readonly string[];
}

/**
 * Where the keys put the work, from the keys found on each node: a shard's tag is `<home tag>` (one
 * shard) or `<home tag>.<index>.<k>` (shards.ts), a source's intake shows in its dedupe keys
 * (`{tag}:dedupe:<sourceId>:<messageId>`), a destination's delivery in its attempt log
 * (`{tag}:attempts:<destinationId>` and its `:seq`). Keys of other tags are ignored.
 */
export function shardSpread(homeTag: string, keysByNode: readonly { node: string; keys: Iterable<string> }[]): Spread {
  const shardOfTag = (tag: string): number | undefined => {
    if (tag === homeTag) return 0;
    if (!tag.startsWith(`${homeTag}.`)) return undefined;
    const m = /^(\d+)\.\d+$/.exec(tag.slice(homeTag.length + 1));
    return m ? Number(m[1]) : undefined;
  };
  const shards = new Map<number, Set<string>>();
  const sources = new Map<string, Set<string>>();
  const destinations = new Map<string, Set<string>>();
  const note = (map: Map<string, Set<string>>, id: string, shard: number, node: string) =>
    map.set(id, (map.get(id) ?? new Set()).add(`${shard}@${node}`));
  for (const { node, keys } of keysByNode)
    for (const key of keys) {
      const tag = hashTag(key);
      const shard = tag === undefined ? undefined : shardOfTag(tag);
      if (shard === undefined) continue;
      shards.set(shard, (shards.get(shard) ?? new Set()).add(node));
      const rest = key.slice(key.indexOf('}') + 1);
      const dedupe = /^:dedupe:([^:]+):/.exec(rest);
      if (dedupe) note(sources, dedupe[1] as string, shard, node);
      const attempts = /^:attempts:([^:]+)(?::seq)?$/.exec(rest);
      if (attempts) note(destinations, attempts[1] as string, shard, node);
    }
  const conflicts: string[] = [];
  const place = (kind: string, map: Map<string, Set<string>>) =>
    Object.fromEntries(
      [...map]
        .sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
        .map(([id, seen]) => {
          if (seen.size > 1) conflicts.push(`${kind} ${id} on ${[...seen].join(', ')}`);
          const [shard, node] = ([...seen][0] as string).split('@') as [string, string];
          return [id, { shard: Number(shard), node }];
        }),
    );
  const placedSources = place('source', sources);
  const placedDestinations = place('destination', destinations);
  for (const [shard, nodes] of shards) if (nodes.size > 1) conflicts.push(`shard ${shard} on ${[...nodes].join(', ')}`);
  const shardNodes = Object.fromEntries(
    [...shards].sort(([a], [b]) => a - b).map(([shard, nodes]) => [String(shard), [...nodes].join(',')]),
  );
  const per_node = keysByNode.map(({ node }) => ({
    node,
    shards: [...shards.values()].filter((n) => n.has(node)).length,
    sources: Object.values(placedSources).filter((p) => p.node === node).length,
    destinations: Object.values(placedDestinations).filter((p) => p.node === node).length,
  }));
  const per_shard = Object.entries(shardNodes).map(([shard, node]) => ({
    shard: Number(shard),
    node,
    sources: Object.values(placedSources).filter((p) => p.shard === Number(shard)).length,
    destinations: Object.values(placedDestinations).filter((p) => p.shard === Number(shard)).length,
  }));
  return { shards: shardNodes, sources: placedSources, destinations: placedDestinations, per_node, per_shard, conflicts };
}
