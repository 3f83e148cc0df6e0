/**
 * `pnpm bench:audiences`: the audiences service (services/audiences/dist, a child process) against
 * a private redis-server. For each size (AUDIENCE_BENCH_SIZES, default "20000,100000" profiles):
 *  1. seed: that many users' identify + track calls go on the profile queue (100 calls a job, as
 *     the router would put them) and a first audiences process applies them; calls/s measured;
 *  2. backfill: a fresh audiences process, then an audience matching a third of the users is
 *     created; measured are the pass's duration (backfilling → ready), profiles/s, and the
 *     process's peak RSS (VmHWM) against its RSS when idle just before.
 * Baseline, same run and Redis: a bare pass reading the same profiles page by page (ZRANGEBYLEX +
 * pipelined HGETALL, no evaluation, no writes) from this process.
 * Bounded memory shows as a peak RSS that does not grow with the number of profiles.
 */
import { existsSync } from 'node:fs';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { distEntry, sleep, startPrivateRedis, startService } from '@eventrelay/testkit';
import { infoField, processMemoryKb, runBench } from './lib/proc.js';
import { fmtInt, round, table, writeResult } from './lib/report.js';

const SIZES = (process.env['AUDIENCE_BENCH_SIZES'] ?? '20000,100000').split(',').map(Number);
const PAGE = 500;
let closeRedis: () => Promise<void> = () => Promise.resolve();

const startAudiences = (redisUrl: string, prefix: string) =>
  startService(
    'audiences',
    { ...process.env, REDIS_URL: redisUrl, EVENTRELAY_PREFIX: prefix, LOG_LEVEL: 'warn', AUDIENCES_SYNC_INTERVAL_MS: '3600000' },
    { echo: 'prefixed' },
  );

async function until(check: () => Promise<boolean>, timeoutMs: number, everyMs: number): Promise<number> {
  for (const start = Date.now(); !(await check()); await sleep(everyMs))
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms`);
  return Date.now();
}

async function runSize(redisUrl: string, redis: Redis, size: number) {
  const prefix = `{bench-aud-${size}}`;
  const now = new Date().toISOString();
  // 1. Seed through the profile queue.
  const seeder = await startAudiences(redisUrl, prefix);
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('profile', { connection, prefix });
  const seedStart = Date.now();
  for (let from = 0; from < size; from += 5000) {
    const jobs = [];
    for (let j = from; j < Math.min(size, from + 5000); j += 50) {
      const calls = [];
      for (let i = j; i < Math.min(size, j + 50); i++) {
        const userId = `user-${String(i).padStart(7, '0')}`;
        const traits = { plan: i % 3 === 0 ? 'trial' : 'pro', email: `${userId}@example.com`, logins: i % 17 };
        calls.push({ type: 'identify', messageId: `i-${i}`, userId, timestamp: now, traits });
        calls.push({ type: 'track', messageId: `t-${i}`, userId, timestamp: now, event: 'Order Completed' });
      }
      jobs.push({ name: 'profile', data: { sourceId: 'src-bench', calls } });
    }
    await queue.addBulk(jobs);
  }
  const seedMs = (await until(async () => (await redis.zcard(`${prefix}:prof:index`)) >= size, 600_000, 100)) - seedStart;
  await queue.close();
  await connection.quit();
  await seeder.stop();

  // Baseline: a bare read pass over the same profiles.
  const bareStart = Date.now();
  let [after, read] = ['-', 0];
  for (;;) {
    const ids = await redis.zrangebylex(`${prefix}:prof:index`, after, '+', 'LIMIT', 0, PAGE);
    if (ids.length === 0) break;
    const p = redis.pipeline();
    for (const id of ids) p.hgetall(`${prefix}:prof:u:${id}`);
    await p.exec();
    [read, after] = [read + ids.length, `(${ids[ids.length - 1]}`];
  }
  const bareMs = Date.now() - bareStart;

  // 2. Backfill in a fresh process.
  const worker = await startAudiences(redisUrl, prefix);
  await sleep(1000);
  const idle = processMemoryKb(worker.pid);
  const hset = (key: string, id: string, value: object) => redis.hset(`${prefix}:cfg:${key}`, id, JSON.stringify({ id, ...value }));
  await hset('sources', 'src-bench', { name: 'Bench', type: 'server', writeKey: 'bench-write-key-0001' });
  await hset('destinations', 'dst-bench', {
    name: 'Webhooks',
    enabled: true,
    sourceIds: [],
    settings: { webhooks: [{ url: 'https://receiver.example/hook' }] },
  });
  await hset('audiences', 'trial', {
    name: 'Trial Users',
    sourceIds: ['src-bench'],
    destinationIds: ['dst-bench'],
    condition: { all: [{ trait: { key: 'plan', equals: 'trial' } }, { event: { name: 'Order Completed', atLeast: 1, withinDays: 30 } }] },
  });
  const created = Date.now();
  await redis.incr(`${prefix}:cfg:version`);
  const state = () => redis.hgetall(`${prefix}:aud:trial:state`);
  const began = await until(async () => (await state())['status'] !== undefined, 30_000, 5);
  const ended = await until(async () => (await state())['status'] === 'ready', 600_000, 20);
  const peak = processMemoryKb(worker.pid);
  const scanned = Number((await state())['scanned'] ?? 0);
  const members = await redis.scard(`${prefix}:aud:trial:members`);
  await worker.stop();
  const passMs = ended - began;
  return {
    profiles: size,
    seed: { calls: size * 2, ms: seedMs, callsPerS: round((size * 2) / (seedMs / 1000), 0) },
    backfill: {
      ms: passMs,
      msFromCreate: ended - created,
      profilesPerS: round(size / (passMs / 1000), 0),
      scanned,
      members,
      expectedMembers: Math.ceil(size / 3),
    },
    baselineBarePass: { profiles: read, ms: bareMs, profilesPerS: round(read / (bareMs / 1000), 0) },
    rssMb: { idle: idle ? round(idle.rssKb / 1024, 1) : null, peak: peak ? round(peak.peakKb / 1024, 1) : null },
  };
}

async function main(): Promise<void> {
  if (!existsSync(distEntry('audiences')))
    throw new Error('services/audiences/dist/index.js is missing: run pnpm exec tsc -b (pnpm bench:audiences does)');
  const started = new Date();
  const server = await startPrivateRedis({ aof: false });
  closeRedis = () => server.close();
  const redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  const runs = [];
  for (const size of SIZES) {
    process.stdout.write(`audiences bench: ${fmtInt(size)} profiles…\n`);
    runs.push(await runSize(server.url, redis, size));
  }
  const usedMemory = infoField(await redis.info('memory'), 'used_memory');
  await redis.quit();
  const header = ['profiles', 'seed calls/s', 'backfill s', 'profiles/s', 'bare pass profiles/s', 'RSS idle MB', 'RSS peak MB'];
  const rows = runs.map((r) => [
    ...[r.profiles, r.seed.callsPerS].map(fmtInt),
    String(round(r.backfill.ms / 1000, 1)),
    ...[r.backfill.profilesPerS, r.baselineBarePass.profilesPerS].map(fmtInt),
    ...[r.rssMb.idle, r.rssMb.peak].map(String),
  ]);
  process.stdout.write(table(header, rows) + '\n');
  const json = {
    bench: 'audiences',
    startedAt: started.toISOString(),
    node: process.version,
    page: PAGE,
    runs,
    redisUsedMemoryMbAtEnd: usedMemory ? round(Number(usedMemory) / 1048576, 1) : null,
  };
  const complete = process.env['AUDIENCE_BENCH_SIZES'] === undefined;
  process.stdout.write(`wrote ${writeResult('audiences-latest.json', 'audiences', started, json, complete).join(', ')}\n`);
}

runBench(main, () => closeRedis(), 1800);
