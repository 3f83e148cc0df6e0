/**
 * `pnpm bench:console`: the web console's weight and how soon its Overview is usable. The built
 * services (ingest, router, webhook-delivery, admin) on a private redis-server, three sources each
 * sending to a destination of its own, CONSOLE_BENCH_CALLS calls (default 3,000) delivered first so
 * the charts have data. Then Debian's Chromium (playwright-core) opens the Overview
 * CONSOLE_BENCH_RUNS times (default 15) in a fresh profile (nothing cached) and as often again with
 * the bundle cached, and records when the page is interactive: every destination's and source's
 * chart drawn and the figures shown (the moment is taken inside the page, by a MutationObserver,
 * as `performance.now()` since navigation began).
 *
 * Baseline, in the same run: the same browser opening a bare page from a bare Node HTTP server on
 * loopback that fetches the same stats answer (captured from the admin API) and writes it into the
 * page: what any page that shows one fetched JSON costs here. Reported: both medians and their
 * ratio, and the bundle's first-load size (gzip). Results: results/console-latest.json.
 */
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { CHROMIUM_FLAGS, CHROMIUM_PATH, REPO_ROOT, sleep, startPrivateRedis, startReceiver } from '@eventrelay/testkit';
import { runBench } from './lib/proc.js';
import { envNumber, fmtFixed, fmtInt, machine, round, table, writeResult } from './lib/report.js';
import { startBenchStack, writeStackConfig } from './lib/stack.js';

const CALLS = envNumber('CONSOLE_BENCH_CALLS', 3_000, 30, 1_000_000);
const RUNS = envNumber('CONSOLE_BENCH_RUNS', 15, 3, 500);
const SOURCES = 3;
const ADMIN_TOKEN = 'console-bench-admin-token-0123456789';
const DIST = path.join(REPO_ROOT, 'packages', 'console', 'dist');
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
let cleanup: () => Promise<unknown> = () => Promise.resolve();

// Runs in the page before its own scripts: records when the page is first ready. A string, not a
// function: tsx's transform would add helpers to a function that the page does not have.
function watchReady(kind: 'console' | 'baseline', charts: number): string {
  const ready =
    kind === 'console'
      ? `document.querySelectorAll('canvas').length >= ${charts} && /Updated/.test(document.body ? document.body.textContent : '')`
      : `document.getElementById('ready') !== null`;
  return `new MutationObserver(() => { if (window.__readyAt === undefined && (${ready})) window.__readyAt = performance.now(); })
    .observe(document, { childList: true, subtree: true, characterData: true });`;
}

async function main(): Promise<void> {
  const started = new Date();
  const bundle = firstLoadBytes();
  const redisServer = await startPrivateRedis({ aof: false });
  const receiver = await startReceiver();
  const configFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'console-bench-')), 'config.json');
  const writeKeys = Array.from({ length: SOURCES }, (_, i) => `wk_console_bench_${i}_000000000`);
  writeStackConfig(
    configFile,
    writeKeys,
    writeKeys.map((_, i) => `${receiver.url}/d${i}`),
    'console-bench-secret',
  );
  const stack = await startBenchStack({
    redisUrl: redisServer.url,
    prefix: '{bench-console}',
    configFile,
    adminToken: ADMIN_TOKEN,
    logLevel: 'warn',
    env: {},
    deliveries: 1,
  });
  const opened: { browser?: Browser; baseline?: Server } = {};
  cleanup = async () => {
    await opened.browser?.close();
    opened.baseline?.close();
    await stack.stop();
    await receiver.close();
    await redisServer.close();
  };

  log(`${CALLS} calls through the pipeline, so the charts have data`);
  await sendCalls(stack.url('ingest'), writeKeys);
  await receiver.waitFor(CALLS, 120_000);
  await sleep(2500); // the stats counters reach Redis within a second
  const statsRes = await fetch(`${stack.url('admin')}/admin/v1/stats?window=hour`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const statsJson = await statsRes.text();
  if (statsRes.status !== 200) throw new Error(`GET /stats answered ${statsRes.status}: ${statsJson}`);
  // Each destination has three charts (outcomes, error ratio, lag), each source one.
  const charts = SOURCES * 3 + SOURCES;

  const baseline = (opened.baseline = await startBaselinePage(statsJson));
  const baselineUrl = `http://127.0.0.1:${(baseline.address() as { port: number }).port}/`;
  const consoleUrl = `${stack.url('admin')}/console/#/`;

  const browser = (opened.browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_FLAGS] }));
  const measure = async (kind: 'console' | 'baseline', context: BrowserContext): Promise<number> => {
    const page = await context.newPage();
    await page.addInitScript({ content: watchReady(kind, charts) });
    await page.goto(kind === 'console' ? consoleUrl : baselineUrl);
    await page
      .waitForFunction(() => (window as unknown as { __readyAt?: number }).__readyAt !== undefined, undefined, { timeout: 30_000 })
      .catch(async (err: unknown) => {
        const seen = await page.evaluate(
          () => `${document.querySelectorAll('canvas').length} charts; page text: ${document.body.innerText.slice(0, 300)}`,
        );
        throw new Error(`the ${kind} page never became ready (${seen})`, { cause: err });
      });
    const at = await page.evaluate(() => (window as unknown as { __readyAt: number }).__readyAt);
    await page.close();
    return at;
  };
  const freshContext = async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript((token) => sessionStorage.setItem('eventrelay.console.token', token), ADMIN_TOKEN);
    return context;
  };

  const samples = {
    console_cold: [] as number[],
    baseline_cold: [] as number[],
    console_warm: [] as number[],
    baseline_warm: [] as number[],
  };
  // One warm-up of each (Chromium's own first start), not counted.
  for (const kind of ['console', 'baseline'] as const) {
    const c = await freshContext();
    await measure(kind, c);
    await c.close();
  }
  log(`${RUNS} cold and ${RUNS} warm loads of each page, alternating`);
  for (let i = 0; i < RUNS; i++)
    for (const kind of ['console', 'baseline'] as const) {
      const context = await freshContext();
      samples[`${kind}_cold`].push(await measure(kind, context));
      samples[`${kind}_warm`].push(await measure(kind, context)); // the same profile: the bundle is cached
      await context.close();
    }

  const med = (xs: number[]) => round(median(xs), 1);
  const result = {
    started: started.toISOString(),
    machine: machine(),
    chromium: browser.version(),
    runs: RUNS,
    calls: CALLS,
    charts,
    bundle_first_load: bundle,
    time_to_interactive_ms: {
      console_cold_median: med(samples.console_cold),
      console_warm_median: med(samples.console_warm),
      baseline_cold_median: med(samples.baseline_cold),
      baseline_warm_median: med(samples.baseline_warm),
      console_cold_p90: round(percentile(samples.console_cold, 0.9), 1),
    },
    ratio_to_baseline: {
      cold: round(median(samples.console_cold) / median(samples.baseline_cold), 2),
      warm: round(median(samples.console_warm) / median(samples.baseline_warm), 2),
    },
    samples_ms: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, v.map((x) => round(x, 1))])),
  };
  process.stdout.write(
    table(
      ['page', 'cold median ms', 'warm median ms', 'first load (gzip)'],
      [
        [
          'console Overview',
          fmtFixed(result.time_to_interactive_ms.console_cold_median, 1),
          fmtFixed(result.time_to_interactive_ms.console_warm_median, 1),
          `${fmtFixed(bundle.gzip_bytes / 1024, 1)} KiB`,
        ],
        [
          'baseline (bare page, one fetch)',
          fmtFixed(result.time_to_interactive_ms.baseline_cold_median, 1),
          fmtFixed(result.time_to_interactive_ms.baseline_warm_median, 1),
          '-',
        ],
        ['ratio', fmtFixed(result.ratio_to_baseline.cold, 2), fmtFixed(result.ratio_to_baseline.warm, 2), fmtInt(bundle.files) + ' files'],
      ],
    ) + '\n',
  );
  const written = writeResult('console-latest.json', 'console', started, result, RUNS >= 15);
  log(`wrote ${written.join(', ')}`);
}

/** What index.html loads (its scripts and stylesheets), raw and gzip-compressed. */
function firstLoadBytes(): { files: number; raw_bytes: number; gzip_bytes: number } {
  let html: string;
  try {
    html = readFileSync(path.join(DIST, 'index.html'), 'utf8');
  } catch {
    throw new Error(`${DIST}/index.html is missing: run pnpm build (pnpm bench:console does)`);
  }
  const assets = new Set(readdirSync(path.join(DIST, 'assets')));
  const named = [...html.matchAll(/(?:src|href)="\/console\/assets\/([^"]+)"/g)].map((m) => m[1]!).filter((f) => assets.has(f));
  const bodies = [Buffer.from(html), ...named.map((f) => readFileSync(path.join(DIST, 'assets', f)))];
  return {
    files: bodies.length,
    raw_bytes: bodies.reduce((n, b) => n + b.length, 0),
    gzip_bytes: bodies.reduce((n, b) => n + gzipSync(b).length, 0),
  };
}

/** A bare page: one script that fetches the stats JSON and writes it into the page. */
function startBaselinePage(statsJson: string): Promise<Server> {
  const html =
    '<!doctype html><html><head><meta charset="utf-8"><title>baseline</title><script src="/page.js" defer></script></head><body></body></html>';
  const script =
    "fetch('/stats.json').then(r => r.json()).then(s => { const p = document.createElement('pre'); p.id = 'ready'; p.textContent = JSON.stringify(s).slice(0, 2000); document.body.append(p); });";
  const server = createServer((req, res) => {
    const [type, body] =
      req.url === '/page.js'
        ? ['text/javascript', script]
        : req.url === '/stats.json'
          ? ['application/json', statsJson]
          : ['text/html', html];
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-cache' }).end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Batches of 30 track calls, 10 per source, in 20 requests at a time. */
async function sendCalls(ingestUrl: string, writeKeys: readonly string[]): Promise<void> {
  const requests = Math.ceil(CALLS / 10);
  for (let i = 0; i < requests; i += 20)
    await Promise.all(
      Array.from({ length: Math.min(20, requests - i) }, async (_, k) => {
        const key = writeKeys[(i + k) % writeKeys.length]!;
        const batch = Array.from({ length: 10 }, (_, j) => ({ type: 'track', userId: `u-${i + k}-${j}`, event: 'Console Bench' }));
        const res = await fetch(`${ingestUrl}/v1/batch`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` },
          body: JSON.stringify({ batch }),
        });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`intake answered ${res.status}`);
      }),
    );
}

function median(xs: number[]): number {
  return percentile(xs, 0.5);
}

function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
}

runBench(main, () => cleanup(), 300);
