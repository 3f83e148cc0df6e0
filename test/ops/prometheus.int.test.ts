/**
 * A real Prometheus (the Debian package's /usr/bin/prometheus) scraping the five processes, which
 * run in this test process against real Redis under a unique prefix and are driven with real
 * traffic: intake calls of every type (accepted, rejected, a duplicate, a 401, and a 503 from the
 * depth guard, and a 503 not_replicated from a second intake in durable mode), deliveries to receivers answering 200, 500 (a retry, and past the retry backlog
 * cap dead letters) and 400 (a dead letter), a job for a deleted destination, an audience whose
 * backfill pass runs, and admin API requests.
 * Prometheus loads ops/prometheus/alerts.yml as it is. Then every metric, selector and listed
 * label value the dashboard and the alerts query must have a series in Prometheus, every
 * dashboard query must evaluate, and every alert rule must evaluate with health ok.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { queueCatalog } from '@eventrelay/config';
import { startTestAdmin, type TestAdmin } from '../support/admin';
import { eventually, freePort, startReceiver } from '@eventrelay/testkit';
import { post, startTestIngest } from '../support/ingest';
import { startTestPipeline, trackCall, webhookDestination, type TestPipeline } from '../support/pipeline';
import { scrape, total } from '../support/prom-text';
import { REPO_ROOT, loadAlertRules, opsMetricNames, opsQueries, promqlSelectors, type Selector } from './promql-names';

const PROMETHEUS = '/usr/bin/prometheus';
const PROCESSES = ['ingest', 'router', 'webhook-delivery', 'audiences', 'admin'] as const;

/** Grafana's variables as the dashboard's defaults resolve them: every destination, a short rate window. */
function grafanaToPromql(expr: string): string {
  return expr.replace(/\$__rate_interval|\$\{__rate_interval\}/g, '1m').replace(/\$\{?destination\}?/g, '.*');
}

interface PromAnswer<T> {
  status: string;
  data: T;
  error?: string;
}

describe('a real Prometheus scraping the running processes', () => {
  const opened: { close(): Promise<void> }[] = [];
  const track = <T extends { close(): Promise<void> }>(thing: T): T => (opened.push(thing), thing);
  let p: TestPipeline;
  let admin: TestAdmin;
  let prometheus: ChildProcess | undefined;
  let prometheusLog = '';
  let promUrl = '';
  const tempDirs: string[] = [];

  async function api<T>(pathAndQuery: string): Promise<T> {
    const res = await fetch(`${promUrl}${pathAndQuery}`);
    const body = (await res.json()) as PromAnswer<T>;
    if (body.status !== 'success') throw new Error(`${pathAndQuery}: ${body.error ?? res.status}`);
    return body.data;
  }

  async function startPrometheus(targets: Record<(typeof PROCESSES)[number], number | number[]>): Promise<void> {
    const dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-prometheus-'));
    tempDirs.push(dir);
    const config = {
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: [path.join(REPO_ROOT, 'ops/prometheus/alerts.yml')],
      scrape_configs: PROCESSES.map((name) => ({
        job_name: `eventrelay-${name}`,
        metrics_path: '/metrics',
        static_configs: [{ targets: [targets[name]].flat().map((port) => `127.0.0.1:${port}`) }],
      })),
    };
    writeFileSync(path.join(dir, 'prometheus.yml'), stringify(config));
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    const child = spawn(
      PROMETHEUS,
      [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    prometheus = child;
    child.stdout?.on('data', (d: Buffer) => (prometheusLog += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (prometheusLog += d.toString()));
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}: ${prometheusLog}`);
        expect((await fetch(`${promUrl}/-/ready`)).status).toBe(200);
      },
      15_000,
      100,
    );
  }

  async function stopPrometheus(): Promise<void> {
    const child = prometheus;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }

  beforeAll(async () => {
    const ok = track(await startReceiver());
    const failing = track(await startReceiver({ responder: () => ({ status: 500 }) }));
    const refusing = track(await startReceiver({ responder: () => ({ status: 400 }) }));
    p = track(
      await startTestPipeline({
        label: 'prometheus',
        ingest: true,
        audiences: true,
        destinations: [
          webhookDestination('d-ok', [ok.url]),
          webhookDestination('d-retry', [failing.url]),
          webhookDestination('d-permanent', [refusing.url]),
        ],
        // Retries far away: each call to d-retry is attempted once during the test. One call held
        // for a retry per destination: d-retry's other calls are dead-lettered at the cap (its
        // counter and alert). One dead letter kept per destination: d-permanent's second one evicts
        // its first (the eviction counter and alert; d-retry's capped calls evict each other too).
        deliveryEnv: {
          DELIVERY_RETRY_BASE_MS: '600000',
          DELIVERY_RETRY_MAX_PER_DESTINATION: '1',
          DELIVERY_DEAD_LETTER_MAX_PER_DESTINATION: '1',
        },
        // The depth guard answers 503 once 5 route jobs wait (filled on purpose at the end).
        ingestEnv: { INGEST_MAX_QUEUE_DEPTH: '5' },
      }),
    );
    admin = track(await startTestAdmin({ prefix: p.prefix }));
    // A second intake in durable mode: the shared Redis has no replica, so it refuses every call
    // with 503 not_replicated (the durable mode series and their alert).
    const durable = track(
      await startTestIngest({ label: 'prometheus-durable', env: { INGEST_DURABLE_REPLICAS: '1', LOG_LEVEL: 'silent' } }),
    );
    const refused = await post(durable.url, '/v1/track', { event: 'Durable', userId: 'u-d' }, { writeKey: durable.writeKey });
    expect([refused.status, refused.json['code']]).toEqual([503, 'not_replicated']);
    await startPrometheus({
      ingest: [p.ingest!.port, durable.ingest.port],
      router: p.router.port,
      'webhook-delivery': p.delivery!.port,
      audiences: p.audiences!.port,
      admin: Number(new URL(admin.url).port),
    });

    // ---- intake: every call type, rejected items, a duplicate, a 401
    const user = { userId: 'u-1' };
    const batch = await post(
      p.ingestUrl,
      '/v1/batch',
      {
        batch: [
          { type: 'track', event: 'Signed Up', messageId: 'm-1', ...user },
          { type: 'identify', messageId: 'm-2', traits: { plan: 'trial' }, ...user },
          { type: 'page', name: 'Home', messageId: 'm-3', ...user },
          { type: 'screen', name: 'Main', messageId: 'm-4', ...user },
          { type: 'group', groupId: 'g-1', messageId: 'm-5', ...user },
          { type: 'alias', previousId: 'anon-1', messageId: 'm-6', ...user },
          { type: 'track', messageId: 'm-7', ...user },
          { type: 'bogus', messageId: 'm-8', ...user },
          { type: 'track', event: 'Muted', messageId: 'm-9', integrations: { All: false }, ...user },
        ],
      },
      { writeKey: p.writeKey },
    );
    expect(batch.status).toBe(200);
    expect((await post(p.ingestUrl, '/v1/track', { event: 'Signed Up', messageId: 'm-1', ...user }, { writeKey: p.writeKey })).status).toBe(
      200,
    );
    expect((await post(p.ingestUrl, '/v1/identify', { traits: { plan: 'pro' }, userId: 'u-2' }, { writeKey: p.writeKey })).status).toBe(
      200,
    );
    expect((await post(p.ingestUrl, '/v1/track', { event: 'X', ...user }, { writeKey: 'no-such-write-key' })).status).toBe(401);

    // ---- delivery: 2xx, 5xx (retry scheduled), 4xx (dead-lettered), and a deleted destination (dropped)
    await p.deliverQueue.add(
      queueCatalog.deliver.jobName,
      { destinationId: 'd-deleted', calls: [{ sourceId: p.source.id, call: trackCall('m-dropped') }] },
      { jobId: 'prometheus-dropped-1' },
    );
    const deliveryUrl = `http://127.0.0.1:${p.delivery!.port}`;
    await eventually(async () => {
      const d = await scrape(deliveryUrl);
      expect(total(d, 'eventrelay_delivery_messages_total', { destination: 'd-ok', result: 'delivered' })).toBeGreaterThan(0);
      expect(total(d, 'eventrelay_delivery_messages_total', { destination: 'd-retry', result: 'retry_scheduled' })).toBeGreaterThan(0);
      expect(total(d, 'eventrelay_delivery_messages_total', { destination: 'd-permanent', result: 'dead_lettered' })).toBeGreaterThan(0);
      expect(total(d, 'eventrelay_delivery_messages_total', { destination: 'd-deleted', result: 'dropped' })).toBe(1);
      expect(total(d, 'eventrelay_delivery_dead_letters_evicted_total', { destination: 'd-permanent' })).toBeGreaterThan(0);
      expect(total(d, 'eventrelay_delivery_retry_capped_total', { destination: 'd-retry' })).toBeGreaterThan(0);
      expect(total(d, 'eventrelay_delivery_retry_held', { destination: 'd-retry' })).toBe(1);
    }, 15_000);

    // ---- audiences: a new audience runs a backfill pass; admin API requests, one unauthorized
    const created = await admin.call('POST', '/audiences', {
      name: 'Trial users',
      sourceIds: [p.source.id],
      destinationIds: ['d-ok'],
      condition: { trait: { key: 'plan', equals: 'trial' } },
    });
    expect(created.status).toBe(201);
    await eventually(
      async () => expect((await admin.call('GET', `/audiences/${created.body.id as string}`)).body.membership.status).toBe('ready'),
      15_000,
    );
    await eventually(async () =>
      expect(
        total(await scrape(`http://127.0.0.1:${p.audiences!.port}`), 'eventrelay_audiences_pass_seconds_count', { kind: 'backfill' }),
      ).toBeGreaterThan(0),
    );
    expect((await admin.call('GET', '/sources')).status).toBe(200);
    expect((await admin.call('GET', '/sources', undefined, { token: 'not-the-admin-token-000000' })).status).toBe(401);

    // ---- intake 5xx: with the route queue paused, 5 waiting jobs put the depth guard over its limit
    await p.routeQueue.pause();
    for (let i = 0; i < 5; i++) await p.route([trackCall(`fill-${i}`)], `fill-${i}`);
    await eventually(
      async () => expect((await post(p.ingestUrl, '/v1/track', { event: 'Over', ...user }, { writeKey: p.writeKey })).status).toBe(503),
      5000,
      100,
    );
    await p.routeQueue.resume();

    // ---- Prometheus: every target up
    await eventually(
      async () => {
        const { activeTargets } = await api<{ activeTargets: { labels: { job: string }; health: string; lastError: string }[] }>(
          '/api/v1/targets',
        );
        expect(activeTargets.map((t) => `${t.labels.job} ${t.health} ${t.lastError}`).sort()).toEqual(
          [...PROCESSES, 'ingest'].map((n) => `eventrelay-${n} up `).sort(),
        );
      },
      15_000,
      200,
    );
  }, 60_000);

  afterAll(async () => {
    await stopPrometheus();
    for (const o of opened.reverse()) await o.close();
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });

  /** The series of a selector (a `match[]` of /api/v1/series). */
  const series = (selector: string) =>
    api<Record<string, string>[]>(`/api/v1/series?${new URLSearchParams({ 'match[]': selector }).toString()}`);

  it('has a series of every metric the dashboard and the alerts query', async () => {
    const wanted = [...opsMetricNames().keys()];
    expect(wanted.length).toBeGreaterThan(20);
    await eventually(
      async () => {
        const names = new Set(await api<string[]>('/api/v1/label/__name__/values'));
        expect(wanted.filter((n) => !names.has(n))).toEqual([]);
      },
      15_000,
      250,
    );
  });

  it('has a series for every selector the dashboard and the alerts use', async () => {
    const selectors = new Map<string, Selector>();
    for (const q of opsQueries()) for (const s of promqlSelectors(grafanaToPromql(q.expr))) selectors.set(s.text, s);
    expect(selectors.size).toBeGreaterThan(30);
    await eventually(
      async () => {
        const empty: string[] = [];
        for (const text of selectors.keys()) if ((await series(text)).length === 0) empty.push(text);
        expect(empty).toEqual([]);
      },
      15_000,
      250,
    );
  });

  it('has a series for every value a selector lists (a|b|c)', async () => {
    const missing: string[] = [];
    let checked = 0;
    for (const q of opsQueries()) {
      for (const s of promqlSelectors(grafanaToPromql(q.expr))) {
        for (const m of s.matchers.filter((x) => x.op === '=~' && /^[A-Za-z0-9_-]+(\|[A-Za-z0-9_-]+)+$/.test(x.value))) {
          for (const value of m.value.split('|')) {
            checked++;
            const found = await series(`${s.metric ?? ''}{${m.name}="${value}"}`);
            if (found.length === 0) missing.push(`${s.metric}{${m.name}="${value}"} (${q.where})`);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });

  it("labels each process's series with its service", async () => {
    const services = (await series('process_start_time_seconds')).map((s) => `${s['job']} ${s['service']}`);
    // Two intakes (the second in durable mode): two series under one job.
    expect(services.sort()).toEqual([...PROCESSES, 'ingest'].map((n) => `eventrelay-${n} ${n}`).sort());
  });

  it('evaluates every query of the dashboard and the alerts without error', async () => {
    const failures: string[] = [];
    for (const q of opsQueries()) {
      const res = await fetch(`${promUrl}/api/v1/query?${new URLSearchParams({ query: grafanaToPromql(q.expr) }).toString()}`);
      const body = (await res.json()) as PromAnswer<unknown>;
      if (body.status !== 'success') failures.push(`${q.where}: ${body.error}`);
    }
    expect(failures).toEqual([]);
  });

  it('loads every alert of ops/prometheus/alerts.yml and evaluates it with health ok', async () => {
    const alerts = loadAlertRules().map((a) => a.alert);
    expect(alerts.length).toBeGreaterThan(0);
    await eventually(
      async () => {
        const { groups } = await api<{ groups: { rules: { name: string; type: string; health: string; lastError?: string }[] }[] }>(
          '/api/v1/rules',
        );
        const rules = groups.flatMap((g) => g.rules).filter((r) => r.type === 'alerting');
        expect(rules.map((r) => `${r.name} ${r.health} ${r.lastError ?? ''}`).sort()).toEqual(alerts.map((a) => `${a} ok `).sort());
      },
      10_000,
      250,
    );
  });

  it('fires the dead-letter and retry cap alerts for the destinations that reached them, on their first events', async () => {
    await eventually(
      async () => {
        const { alerts } = await api<{ alerts: { labels: Record<string, string>; state: string }[] }>('/api/v1/alerts');
        const firing = alerts.filter((a) => a.state === 'firing').map((a) => `${a.labels['alertname']} ${a.labels['destination'] ?? ''}`);
        // The other alerts wait 2 minutes or more ("for") before they fire, or see nothing wrong.
        expect(firing.sort()).toEqual([
          'EventrelayDeadLettersEvicted d-permanent',
          'EventrelayDeadLettersEvicted d-retry',
          'EventrelayDeadLettersGrowing d-permanent',
          'EventrelayDeadLettersGrowing d-retry',
          'EventrelayRetryBacklogCapped d-retry',
        ]);
      },
      10_000,
      250,
    );
  });
});
