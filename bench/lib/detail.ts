/**
 * The detail mode's measurements over a run's measured window (`pnpm bench:pipeline`): what Redis
 * did (INFO commandstats and CPU deltas, whole server: commands run inside Lua scripts count, and
 * evalsha's µs include them), the queue lengths (read by the product's own queue code), the
 * services' counters from /metrics, and each intake request's latency.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { readQueues } from '@eventrelay/runtime';
import { sleep } from '@eventrelay/testkit';
import { infoField } from './proc.js';
import { round } from './report.js';
import { percentiles } from './series.js';

export type RedisSnapshot = Awaited<ReturnType<typeof redisSnapshot>>;

export async function redisSnapshot(redis: Redis) {
  const info = await redis.info('all');
  const commands = new Map<string, { calls: number; usec: number }>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm))
    commands.set(m[1] as string, { calls: Number(m[2]), usec: Number(m[3]) });
  const n = (f: string) => Number(infoField(info, f) ?? 0);
  return {
    cpuSeconds: n('used_cpu_user') + n('used_cpu_sys'),
    usedMemory: n('used_memory'),
    commands,
    /** Commands run, counted as INFO does: on Redis 7 the ones Lua scripts run are included. */
    totalCommands: n('total_commands_processed'),
    version: infoField(info, 'redis_version') ?? 'unknown',
  };
}

/** Commands run between two snapshots, most calls first. */
export function commandDeltas(before: RedisSnapshot, after: RedisSnapshot): { command: string; calls: number; usec: number }[] {
  return [...after.commands]
    .map(([command, { calls, usec }]) => {
      const b = before.commands.get(command);
      return { command, calls: calls - (b?.calls ?? 0), usec: usec - (b?.usec ?? 0) };
    })
    .filter((d) => d.calls > 0)
    .sort((a, b) => b.calls - a.calls);
}

/** The sum of a counter's lines in /metrics text that carry `label`. */
export const sumMetric = (text: string, metric: string, label: string): number =>
  text
    .split('\n')
    .filter((l) => (l.startsWith(`${metric}{`) || l.startsWith(`${metric} `)) && l.includes(label))
    .reduce((n, l) => n + (Number(l.slice(l.lastIndexOf(' ') + 1)) || 0), 0);

const COUNTERS = [
  ['ingest_accepted_calls', 'ingest', 'eventrelay_ingest_calls_total', 'outcome="accepted"'],
  ['ingest_duplicate_calls', 'ingest', 'eventrelay_ingest_calls_total', 'outcome="duplicate"'],
  ['router_routed_calls', 'router', 'eventrelay_router_calls_total', 'result="routed"'],
  ['router_delivery_jobs', 'router', 'eventrelay_router_deliveries_total', ''],
  ['delivery_delivered', 'delivery', 'eventrelay_delivery_messages_total', 'result="delivered"'],
  ['delivery_retry_scheduled', 'delivery', 'eventrelay_delivery_messages_total', 'result="retry_scheduled"'],
  ['delivery_parked', 'delivery', 'eventrelay_delivery_parked_total', ''],
] as const;

type Urls = { ingest: string; router: string; deliveries: readonly string[] };

/** The counters above (deliveries summed over the replicas) and, with replicas, each one's delivered calls (`delivery_<n>_delivered`). */
async function scrape(urls: Urls): Promise<Record<string, number>> {
  const get = (u: string) => fetch(`${u}/metrics`).then((r) => r.text());
  const [ingest, router, ...delivery] = await Promise.all([get(urls.ingest), get(urls.router), ...urls.deliveries.map(get)]);
  const texts = { ingest: [ingest ?? ''], router: [router ?? ''], delivery };
  const out: Record<string, number> = {};
  for (const [name, from, metric, label] of COUNTERS) out[name] = texts[from].reduce((n, t) => n + sumMetric(t, metric, label), 0);
  if (delivery.length > 1)
    delivery.forEach(
      (t, i) => (out[`delivery_${i + 1}_delivered`] = sumMetric(t, 'eventrelay_delivery_messages_total', 'result="delivered"')),
    );
  return out;
}

/** Queue lengths every 250 ms: the route and deliver queues through the product's reader, or the bare chain's BullMQ queue. */
function sampleQueues(redis: Redis, prefix: string, chain: boolean): () => Promise<Record<string, { mean: number; max: number }>> {
  const samples = new Map<string, number[]>();
  const chainQueue = chain ? new Queue('chain', { connection: redis, prefix }) : undefined;
  const read = async (): Promise<Record<string, number>> => {
    if (chainQueue) {
      const c = await chainQueue.getJobCounts('wait', 'active');
      return { 'chain wait': c['wait'] ?? 0, 'chain active': c['active'] ?? 0 };
    }
    const out: Record<string, number> = {};
    for (const [key, { counts }] of await readQueues(redis, prefix, ['route', 'deliver'], Date.now())) {
      Object.assign(out, { [`${key} wait`]: counts.waiting, [`${key} active`]: counts.active });
      if (key === 'deliver') out['deliver delayed'] = counts.delayed;
    }
    return out;
  };
  let running = true;
  const loop = (async () => {
    for (; running; await sleep(250))
      for (const [k, v] of Object.entries(await read().catch(() => ({})))) samples.set(k, [...(samples.get(k) ?? []), v]);
  })();
  return async () => {
    running = false;
    await loop;
    return Object.fromEntries(
      [...samples].map(([k, s]) => [k, { mean: round(s.reduce((a, b) => a + b, 0) / s.length, 1), max: Math.max(...s) }]),
    );
  };
}

/** Starts measuring; the returned function ends the window and computes the figures per delivered call. */
export async function startDetail(o: { redis: Redis; prefix: string; chain?: boolean; urls?: Urls; requestMs?: number[] }) {
  const before = await redisSnapshot(o.redis);
  const countersBefore = o.urls ? await scrape(o.urls) : undefined;
  const queues = sampleQueues(o.redis, o.prefix, o.chain === true);
  const began = performance.now();
  return async (delivered: number) => {
    const wallS = (performance.now() - began) / 1000;
    const after = await redisSnapshot(o.redis);
    const countersAfter = o.urls ? await scrape(o.urls) : undefined;
    const perCall = (n: number) => (delivered > 0 ? round(n / delivered, 3) : null);
    const deltas = commandDeltas(before, after);
    const commands = deltas.reduce((a, d) => a + d.calls, 0);
    const cpuS = after.cpuSeconds - before.cpuSeconds;
    return {
      redis: {
        commands,
        total_commands_processed: after.totalCommands - before.totalCommands,
        commands_per_call: perCall(commands),
        cpu_usec_per_call: perCall(cpuS * 1e6),
        cpu_pct: round((cpuS / wallS) * 100, 1),
        used_memory_delta_mb: round((after.usedMemory - before.usedMemory) / 2 ** 20, 1),
        by_command: deltas.map((d) => ({ ...d, per_call: perCall(d.calls), usec_per_call: perCall(d.usec) })),
      },
      queue_lengths: await queues(),
      service_counters: countersAfter
        ? Object.fromEntries(Object.entries(countersAfter).map(([k, v]) => [k, v - (countersBefore?.[k] ?? 0)]))
        : null,
      intake_request_ms: o.requestMs ? { ...percentiles(o.requestMs, { p50: 0.5, p99: 0.99 }), requests: o.requestMs.length } : null,
    };
  };
}
