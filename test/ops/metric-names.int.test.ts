/**
 * Every metric the Grafana dashboard and the alert rules query, and every metric docs/metrics.md
 * promises, is exported by a running process: the five processes are started in this process
 * (real start functions, real Redis under a unique prefix) and each /metrics is read for the
 * names its `# TYPE` lines declare.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestAdmin, type TestAdmin } from '../support/admin';
import { startTestPipeline, type TestPipeline } from '../support/pipeline';
import { parsePromText, type Sample } from '../support/prom-text';
import { REPO_ROOT, dashboardQueries, opsMetricNames, promqlMetricNames, promqlSelectors } from './promql-names';

type ProcessName = 'ingest' | 'router' | 'webhook-delivery' | 'audiences' | 'admin';
const PROCESSES: readonly ProcessName[] = ['ingest', 'router', 'webhook-delivery', 'audiences', 'admin'];

/** Base name → type, from the `# TYPE` lines of a Prometheus text exposition. */
function declaredMetrics(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/gm))
    out.set(m[1] as string, m[2] as string);
  return out;
}

/** The series names a declared metric shows up under in PromQL. */
function seriesNames(name: string, type: string): string[] {
  if (type === 'histogram') return [`${name}_bucket`, `${name}_sum`, `${name}_count`];
  if (type === 'summary') return [name, `${name}_sum`, `${name}_count`];
  return [name];
}

/** Which processes each section of docs/metrics.md is about. */
const SECTION_PROCESSES: Record<string, readonly ProcessName[]> = {
  'Every process': PROCESSES,
  Queues: ['router', 'webhook-delivery', 'audiences'],
  Ingest: ['ingest'],
  Router: ['router'],
  'Webhook delivery': ['webhook-delivery'],
  Audiences: ['audiences'],
  Admin: ['admin'],
};

/** Section title → the metric names in the first column of its tables. */
function documentedMetrics(markdown: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let section: string | undefined;
  for (const line of markdown.split('\n')) {
    const h = /^## (.+?)\s*$/.exec(line);
    if (h) {
      section = h[1];
      continue;
    }
    if (section === undefined || !line.startsWith('|') || /^\|\s*-/.test(line) || /^\|\s*metric\s*\|/.test(line)) continue;
    const first = line.split('|')[1] ?? '';
    const names = [...first.matchAll(/`([a-zA-Z_:][a-zA-Z0-9_:]*)`/g)].map((m) => m[1] as string);
    out.set(section, [...(out.get(section) ?? []), ...names]);
  }
  return out;
}

describe('metric names', () => {
  let p: TestPipeline;
  let admin: TestAdmin;
  const declared = new Map<ProcessName, Map<string, string>>();
  const samples = new Map<ProcessName, Sample[]>();

  beforeAll(async () => {
    p = await startTestPipeline({ label: 'metric-names', ingest: true, audiences: true });
    admin = await startTestAdmin({ prefix: p.prefix });
    const urls: Record<ProcessName, string> = {
      ingest: p.ingestUrl,
      router: `http://127.0.0.1:${p.router.port}`,
      'webhook-delivery': `http://127.0.0.1:${p.delivery!.port}`,
      audiences: `http://127.0.0.1:${p.audiences!.port}`,
      admin: admin.url,
    };
    for (const name of PROCESSES) {
      const res = await fetch(`${urls[name]}/metrics`);
      expect(res.status).toBe(200);
      const text = await res.text();
      declared.set(name, declaredMetrics(text));
      samples.set(name, parsePromText(text));
    }
  }, 30_000);

  afterAll(async () => {
    await admin?.close();
    await p?.close();
  });

  const exportedBy = (name: ProcessName): Set<string> =>
    new Set([...(declared.get(name) ?? new Map<string, string>())].flatMap(([n, type]) => seriesNames(n, type)));

  it('reads metric names out of PromQL', () => {
    expect(
      promqlMetricNames(
        'sum by (destination, le) (rate(eventrelay_a_bucket{outcome!="success", x=~"a|{b}"}[5m] offset 1h)) / on (job) group_left (service) max_over_time(b_total[$__rate_interval]) > bool 0.5',
      ),
    ).toEqual(['b_total', 'eventrelay_a_bucket']);
    expect(
      promqlMetricNames(
        'up{job=~"eventrelay-.*"} == 0 or absent(up{job="x"}) unless {__name__="named", a="b"} and histogram_quantile(0.99, sum(rate(h_bucket[1h30m]))) * 1e3',
      ),
    ).toEqual(['h_bucket', 'named', 'up']);
    expect(promqlSelectors('rate(m_total{a="1", b!~"x|y"}[5m])')).toEqual([
      {
        metric: 'm_total',
        matchers: [
          { name: 'a', op: '=', value: '1' },
          { name: 'b', op: '!~', value: 'x|y' },
        ],
        text: 'm_total{a="1", b!~"x|y"}',
      },
    ]);
    expect(
      dashboardQueries({
        templating: {
          list: [{ name: 'destination', type: 'query', query: { query: 'label_values(eventrelay_delivery_attempts_total, destination)' } }],
        },
      }),
    ).toEqual([{ where: 'variable destination', expr: 'eventrelay_delivery_attempts_total' }]);
  });

  it('finds the queries of the dashboard and the alerts', () => {
    const names = opsMetricNames();
    expect(names.size).toBeGreaterThan(20);
    for (const name of names.keys()) expect(name).toMatch(/^(up|eventrelay_[a-z_]+|process_[a-z_]+|nodejs_[a-z0-9_]+)$/);
  });

  it('exports every metric the dashboard and the alerts query', () => {
    const all = new Set(PROCESSES.flatMap((n) => [...exportedBy(n)]));
    const missing = [...opsMetricNames()]
      // up is Prometheus' own, per target
      .filter(([name]) => name !== 'up' && !all.has(name))
      .map(([name, where]) => `${name} (${where.join('; ')})`);
    expect(missing).toEqual([]);
  });

  it('exports every metric docs/metrics.md lists from the processes its section names', () => {
    const doc = documentedMetrics(readFileSync(path.join(REPO_ROOT, 'docs/metrics.md'), 'utf8'));
    expect([...doc.keys()].sort()).toEqual(Object.keys(SECTION_PROCESSES).sort());
    const missing: string[] = [];
    for (const [section, names] of doc) {
      expect(names.length).toBeGreaterThan(0);
      for (const proc of SECTION_PROCESSES[section] ?? []) {
        const mine = declared.get(proc) ?? new Map<string, string>();
        for (const name of names) if (!mine.has(name)) missing.push(`${name} (section "${section}") from ${proc}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('exports the counters whose label values are known in advance at start, before any event (docs/metrics.md)', () => {
    const values = (proc: ProcessName, metric: string, label: string) =>
      [...new Set((samples.get(proc) ?? []).filter((s) => s.name === metric).map((s) => s.labels[label]))].sort();
    for (const proc of PROCESSES) {
      const errors = (samples.get(proc) ?? []).filter((s) => s.name === 'eventrelay_redis_errors_total');
      const connections = [...new Set(errors.map((s) => s.labels['connection']))];
      expect(connections.length).toBeGreaterThan(0);
      for (const connection of connections)
        expect(
          errors
            .filter((s) => s.labels['connection'] === connection)
            .map((s) => s.labels['kind'])
            .sort(),
        ).toEqual(['command', 'connection', 'oom']);
    }
    expect(values('router', 'eventrelay_router_calls_total', 'result')).toEqual(['routed', 'suppressed', 'unrouted']);
    expect(values('router', 'eventrelay_router_filtered_total', 'reason')).toEqual([
      'filter_drop',
      'filter_only',
      'integrations',
      'suppression',
    ]);
    expect(values('audiences', 'eventrelay_audiences_profile_calls_total', 'result')).toEqual(['applied', 'repeated']);
    expect(values('audiences', 'eventrelay_audiences_membership_changes_total', 'change')).toEqual(['entered', 'left']);
    expect(values('audiences', 'eventrelay_audiences_passes_total', 'kind')).toEqual(['backfill', 'periodic']);
    expect(values('audiences', 'eventrelay_audiences_regulation_subjects_total', 'regulation_type')).toEqual([
      'DELETE',
      'SUPPRESS',
      'SUPPRESS_WITH_DELETE',
    ]);
  });

  it('documents every eventrelay metric a process exports', () => {
    const doc = new Set([...documentedMetrics(readFileSync(path.join(REPO_ROOT, 'docs/metrics.md'), 'utf8')).values()].flat());
    const undocumented = PROCESSES.flatMap((proc) =>
      [...(declared.get(proc)?.keys() ?? [])].filter((n) => n.startsWith('eventrelay_') && !doc.has(n)).map((n) => `${n} from ${proc}`),
    );
    expect(undocumented).toEqual([]);
  });
});
