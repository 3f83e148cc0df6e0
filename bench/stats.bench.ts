/**
 * `pnpm bench:stats`: what the stats counters (GET /admin/v1/stats) cost Redis. The built ingest,
 * router, webhook-delivery and admin services on a private redis-server, one source → one
 * destination → a receiver answering 200; STATS_BENCH_CALLS calls (default 20,000) sent to the
 * intake in batches of 20 at STATS_BENCH_RATE calls/s (default 1,000). MONITOR on a connection of
 * its own attributes each command: the stats flushes (an EVALSHA naming `<prefix>:stats:` keys,
 * sent by a client) and the commands their script runs, against every command Redis ran (INFO
 * commandstats over the run, script commands included, as bench:pipeline counts). Reported:
 * stats commands per delivered call and in all, flushes per service, and what one flush carries
 * (buckets, fields, the commands Redis runs inside the script). Results: results/stats-latest.json.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { distEntry, sleep, startPrivateRedis, startReceiver } from '@eventrelay/testkit';
import { sendBatchesOpenLoop } from './lib/drive.js';
import { connectRedis, runBench } from './lib/proc.js';
import { BENCH_DIR, envNumber, fmtFixed, fmtInt, machine, round, table, writeResult } from './lib/report.js';
import { STACK_SERVICES, startBenchStack, writeStackConfig } from './lib/stack.js';

const CALLS = envNumber('STATS_BENCH_CALLS', 20_000, 20, 1_000_000);
const RATE = envNumber('STATS_BENCH_RATE', 1_000, 20, 100_000);
const BATCH = 20;
const WRITE_KEY = 'wk_stats_bench_0000000000';
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
let cleanup: () => Promise<unknown> = () => Promise.resolve();

/** One command a client sent, as MONITOR reports it. */
interface Seen {
  readonly args: readonly string[];
  readonly source: string;
}

async function main(): Promise<void> {
  const started = new Date();
  for (const svc of STACK_SERVICES)
    if (!existsSync(distEntry(svc)))
      throw new Error(`${path.relative(BENCH_DIR, distEntry(svc))} is missing: run pnpm exec tsc -b (pnpm bench:stats does)`);
  const redisServer = await startPrivateRedis({ aof: false });
  const receiver = await startReceiver();
  const redis = connectRedis(redisServer.url);
  const prefix = '{bench-stats}';
  const configFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'stats-bench-')), 'config.json');
  writeStackConfig(configFile, [WRITE_KEY], [receiver.url], 'stats-bench-secret');
  const stack = await startBenchStack({
    redisUrl: redisServer.url,
    prefix,
    configFile,
    adminToken: 'stats-bench-admin-token-0123456789',
    logLevel: 'warn',
    env: {},
    deliveries: 1,
  });
  cleanup = async () => {
    await stack.stop();
    redis.disconnect();
    await receiver.close();
    await redisServer.close();
  };

  // Before MONITOR starts: the services' first flushes load the script (NOSCRIPT, then EVAL).
  await sendBatches(stack.url('ingest'), 1, 1);
  await receiver.waitFor(BATCH, 30_000);
  await sleep(2500);

  const statsKey = `${prefix}:stats:`;
  const flushes: Seen[] = [];
  let scriptCommands = 0;
  const monitor = await redis.monitor();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source === 'lua') {
      if (args[1]?.startsWith(statsKey)) scriptCommands++;
    } else if (args.some((a) => a.startsWith(statsKey))) flushes.push({ args, source });
  });
  const before = await commandCount(redis);
  const t0 = Date.now();
  log(`${CALLS} calls at ${RATE} calls/s`);
  await sendBatches(stack.url('ingest'), Math.ceil(CALLS / BATCH), RATE / BATCH);
  await receiver.waitFor(BATCH + Math.ceil(CALLS / BATCH) * BATCH, 120_000);
  const seconds = (Date.now() - t0) / 1000;
  // The last counts reach Redis within a flush interval (1 s).
  await sleep(2500);
  const after = await commandCount(redis);
  monitor.disconnect();

  const delivered = receiver.requests.length - BATCH;
  const statsCommands = flushes.length;
  // Whole-server commandstats, the commands scripts run included (as bench:pipeline counts); less
  // the MONITOR and INFO this bench sent.
  const allCommands = after - before - 2;
  // evalsha, sha, numkeys, the keys (two per minute), two TTLs, then per minute two counts and its field/value pairs.
  const fieldsOf = (s: Seen) => {
    const keys = Number(s.args[2]);
    return (s.args.length - 3 - keys - 2 - keys) / 2;
  };
  const byService = {
    'webhook-delivery': flushes.filter((s) => s.args.some((a) => a.startsWith('d:'))).length,
    ingest: flushes.filter((s) => s.args.some((a) => a.startsWith('s:'))).length,
  };
  const result = {
    started: started.toISOString(),
    machine: machine(),
    calls: CALLS,
    rate: RATE,
    seconds: round(seconds, 1),
    delivered,
    commands_per_delivered_call: round(allCommands / delivered, 3),
    stats: {
      commands: statsCommands,
      commands_per_delivered_call: round(statsCommands / delivered, 5),
      share_of_all_commands: round(statsCommands / allCommands, 5),
      // Comparable with bench:pipeline's redis_commands_per_call, which counts what scripts run too.
      commands_with_script_commands_per_delivered_call: round((statsCommands + scriptCommands) / delivered, 5),
      share_of_all_commands_with_script_commands: round((statsCommands + scriptCommands) / allCommands, 5),
      // Each flush is one EVALSHA (packages/stores/test/stats-counters.int.test.ts): anything else would show here.
      not_evalsha: flushes.filter((s) => s.args[0]?.toLowerCase() !== 'evalsha').length,
      flushes_by_service: byService,
      buckets_per_flush_mean: round(flushes.reduce((n, s) => n + Number(s.args[2]) / 2, 0) / Math.max(1, statsCommands), 2),
      fields_per_flush_mean: round(flushes.reduce((n, s) => n + fieldsOf(s), 0) / Math.max(1, statsCommands), 2),
      script_commands_per_flush_mean: round(scriptCommands / Math.max(1, statsCommands), 2),
    },
  };
  process.stdout.write(
    table(
      ['delivered', 's', 'all cmds/call', 'stats cmds', 'stats cmds/call', 'share', 'flushes (delivery, ingest)', 'in-script cmds/flush'],
      [
        [
          fmtInt(delivered),
          fmtFixed(seconds, 1),
          fmtFixed(result.commands_per_delivered_call, 2),
          fmtInt(statsCommands),
          fmtFixed(result.stats.commands_per_delivered_call, 5),
          `${fmtFixed(result.stats.share_of_all_commands * 100, 3)}%`,
          `${byService['webhook-delivery']}, ${byService.ingest}`,
          fmtFixed(result.stats.script_commands_per_flush_mean, 1),
        ],
      ],
    ) + '\n',
  );
  const written = writeResult('stats-latest.json', 'stats', started, result, CALLS >= 20_000);
  log(`wrote ${written.join(', ')}`);
}

/** Batches of 20 track calls to the intake, `perSecond` batches a second (open loop). */
function sendBatches(ingestUrl: string, count: number, perSecond: number): Promise<void> {
  return sendBatchesOpenLoop(ingestUrl, count, perSecond, (i) => ({
    writeKey: WRITE_KEY,
    calls: Array.from({ length: BATCH }, (_, k) => ({ type: 'track', userId: `u-${i}-${k}`, event: 'Stats Bench' })),
  }));
}

/** Every command clients had Redis run so far (INFO commandstats). */
async function commandCount(redis: ReturnType<typeof connectRedis>): Promise<number> {
  const info = await redis.info('commandstats');
  let total = 0;
  for (const m of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) total += Number(m[1]);
  return total;
}

runBench(main, () => cleanup(), 300);
