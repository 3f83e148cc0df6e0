/**
 * The metric names a PromQL expression reads, and the selectors it reads them with, for the tests
 * that hold the dashboard and the alert rules against what the processes export. A small
 * tokenizer, not a PromQL parser: it knows strings, label matchers `{…}`, ranges and subqueries
 * `[…]`, the label lists of `by`/`without`/`on`/`ignoring`/`group_left`/`group_right`, numbers and
 * durations, Grafana variables, and that a name followed by `(` is a function or an aggregation.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

export const REPO_ROOT = path.resolve(__dirname, '../..');

/** PromQL functions (Prometheus 2.x), including the experimental ones. */
const FUNCTIONS = new Set([
  'abs',
  'absent',
  'absent_over_time',
  'acos',
  'acosh',
  'asin',
  'asinh',
  'atan',
  'atanh',
  'avg_over_time',
  'ceil',
  'changes',
  'clamp',
  'clamp_max',
  'clamp_min',
  'cos',
  'cosh',
  'count_over_time',
  'day_of_month',
  'day_of_week',
  'day_of_year',
  'days_in_month',
  'deg',
  'delta',
  'deriv',
  'exp',
  'floor',
  'histogram_count',
  'histogram_fraction',
  'histogram_quantile',
  'histogram_sum',
  'histogram_stddev',
  'histogram_stdvar',
  'holt_winters',
  'hour',
  'idelta',
  'increase',
  'irate',
  'label_join',
  'label_replace',
  'last_over_time',
  'ln',
  'log10',
  'log2',
  'mad_over_time',
  'max_over_time',
  'min_over_time',
  'minute',
  'month',
  'pi',
  'predict_linear',
  'present_over_time',
  'quantile_over_time',
  'rad',
  'rate',
  'resets',
  'round',
  'scalar',
  'sgn',
  'sin',
  'sinh',
  'sort',
  'sort_desc',
  'sqrt',
  'stddev_over_time',
  'stdvar_over_time',
  'sum_over_time',
  'tan',
  'tanh',
  'time',
  'timestamp',
  'vector',
  'year',
]);
const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
]);
/** Keywords whose parenthesized list holds label names, not series. */
const LABEL_LIST_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const KEYWORDS = new Set([...LABEL_LIST_KEYWORDS, 'bool', 'offset', 'and', 'or', 'unless', 'inf', 'nan']);

interface LabelMatcher {
  readonly name: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

/** One vector selector: a metric name (or only `__name__` matchers) and its label matchers. */
export interface Selector {
  readonly metric: string | undefined;
  readonly matchers: readonly LabelMatcher[];
  /** The selector as written, without a range or offset, usable as a `match[]` of /api/v1/series. */
  readonly text: string;
}

function unquote(raw: string): string {
  const quote = raw[0];
  const body = raw.slice(1, -1);
  if (quote === '`') return body;
  return body.replace(/\\(.)/g, (_m, c: string) => ({ n: '\n', t: '\t', '\\': '\\', '"': '"', "'": "'" })[c] ?? c);
}

function parseMatchers(inner: string, expr: string): LabelMatcher[] {
  const matchers: LabelMatcher[] = [];
  const re = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)\s*(,|$)/y;
  let at = 0;
  while (at < inner.length) {
    if (/^\s*$/.test(inner.slice(at))) break;
    re.lastIndex = at;
    const m = re.exec(inner);
    if (!m) throw new Error(`promql-names: cannot read the label matchers {${inner}} of: ${expr}`);
    matchers.push({ name: m[1] as string, op: m[2] as LabelMatcher['op'], value: unquote(m[3] as string) });
    at = re.lastIndex;
  }
  return matchers;
}

/** Index just past the string starting at `at` (which holds its quote). */
function skipString(expr: string, at: number): number {
  const quote = expr[at];
  let i = at + 1;
  while (i < expr.length && expr[i] !== quote) i += quote !== '`' && expr[i] === '\\' ? 2 : 1;
  if (i >= expr.length) throw new Error(`promql-names: unterminated string in: ${expr}`);
  return i + 1;
}

/** Index just past the bracket group opened at `at`, strings inside it skipped. */
function skipGroup(expr: string, at: number, open: string, close: string): number {
  let depth = 0;
  for (let i = at; i < expr.length;) {
    const c = expr[i] as string;
    if (c === '"' || c === "'" || c === '`') {
      i = skipString(expr, i);
      continue;
    }
    if (c === open) depth++;
    if (c === close && --depth === 0) return i + 1;
    i++;
  }
  throw new Error(`promql-names: unbalanced ${open}${close} in: ${expr}`);
}

/** Every vector selector of a PromQL expression, in order of appearance. */
export function promqlSelectors(expr: string): Selector[] {
  const out: Selector[] = [];
  let i = 0;
  const nextNonSpace = (from: number): number => {
    let j = from;
    while (j < expr.length && /\s/.test(expr[j] as string)) j++;
    return j;
  };
  while (i < expr.length) {
    const c = expr[i] as string;
    const rest = expr.slice(i);
    if (/\s/.test(c)) {
      i++;
    } else if (c === '#') {
      // a comment runs to the end of the line
      const nl = expr.indexOf('\n', i);
      i = nl === -1 ? expr.length : nl;
    } else if (c === '"' || c === "'" || c === '`') {
      i = skipString(expr, i);
    } else if (c === '$') {
      // Grafana variables: $name, ${name}, ${name:format}, $__rate_interval
      const m = /^\$(\{[^}]*\}|\w+)/.exec(rest);
      if (!m) throw new Error(`promql-names: stray $ in: ${expr}`);
      i += m[0].length;
    } else if (c === '[') {
      // a range or subquery: durations and Grafana variables only
      i = skipGroup(expr, i, '[', ']');
    } else if (c === '{') {
      // a selector with no metric name: {__name__="x", …}
      const end = skipGroup(expr, i, '{', '}');
      const matchers = parseMatchers(expr.slice(i + 1, end - 1), expr);
      const byName = matchers.find((m) => m.name === '__name__' && m.op === '=');
      out.push({ metric: byName?.value, matchers, text: expr.slice(i, end) });
      i = end;
    } else if (/[0-9.]/.test(c)) {
      // a number, a duration (5m, 1h30m, 100ms), hex, or exponent form
      const m = /^(0x[0-9a-fA-F]+|(\d+(ms|[smhdwy]))+|\d*\.?\d+(e[+-]?\d+)?)/i.exec(rest);
      i += m ? m[0].length : 1;
    } else if (/[a-zA-Z_:]/.test(c)) {
      const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(rest) as RegExpExecArray;
      const word = m[0];
      const after = nextNonSpace(i + word.length);
      const lower = word.toLowerCase();
      if (LABEL_LIST_KEYWORDS.has(lower) && expr[after] === '(') {
        i = skipGroup(expr, after, '(', ')');
      } else if (KEYWORDS.has(lower) || FUNCTIONS.has(word) || AGGREGATIONS.has(lower) || expr[after] === '(') {
        // a keyword, a function or an aggregation (anything called like one is not a series)
        i += word.length;
      } else if (expr[after] === '{') {
        const end = skipGroup(expr, after, '{', '}');
        out.push({ metric: word, matchers: parseMatchers(expr.slice(after + 1, end - 1), expr), text: `${word}${expr.slice(after, end)}` });
        i = end;
      } else {
        out.push({ metric: word, matchers: [], text: word });
        i += word.length;
      }
    } else {
      i++;
    }
  }
  return out;
}

/** The metric names an expression reads (sorted, unique). */
export function promqlMetricNames(expr: string): string[] {
  return [...new Set(promqlSelectors(expr).flatMap((s) => (s.metric === undefined ? [] : [s.metric])))].sort();
}

// ------------------------------------------------------------------------------- the artifacts

/** A query of the dashboard or of the alert rules, and where it is. */
export interface OpsQuery {
  readonly where: string;
  readonly expr: string;
}

interface Panel {
  id?: number;
  title?: string;
  type?: string;
  targets?: { expr?: string; refId?: string }[];
  panels?: Panel[];
}

/** Every panel of a dashboard, those inside (collapsed) rows included. */
export function dashboardPanels(dashboard: { panels?: Panel[] }): Panel[] {
  const out: Panel[] = [];
  const walk = (panels: Panel[] | undefined) => {
    for (const p of panels ?? []) {
      out.push(p);
      walk(p.panels);
    }
  };
  walk(dashboard.panels);
  return out;
}

/**
 * Every PromQL query of a Grafana dashboard: the panels' target expressions and the queries of
 * its Prometheus template variables (`label_values(<selector>, <label>)`: the selector part).
 */
export function dashboardQueries(dashboard: {
  panels?: Panel[];
  templating?: { list?: { name?: string; type?: string; query?: unknown; definition?: string }[] };
}): OpsQuery[] {
  const out: OpsQuery[] = [];
  for (const p of dashboardPanels(dashboard)) {
    for (const t of p.targets ?? [])
      if (typeof t.expr === 'string' && t.expr.trim() !== '')
        out.push({ where: `panel ${p.id} "${p.title}" target ${t.refId}`, expr: t.expr });
  }
  for (const v of dashboard.templating?.list ?? []) {
    if (v.type !== 'query') continue;
    const q = typeof v.query === 'string' ? v.query : ((v.query as { query?: string } | undefined)?.query ?? v.definition ?? '');
    const labelValues = /^\s*label_values\(\s*(.*?)\s*,\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$/s.exec(q);
    const queryResult = /^\s*query_result\((.*)\)\s*$/s.exec(q);
    const metrics = /^\s*metrics\((.*)\)\s*$/s.exec(q);
    if (metrics) throw new Error(`dashboard variable ${v.name}: metrics() queries are not checked by promql-names`);
    const expr = labelValues?.[1] ?? queryResult?.[1] ?? q;
    if (expr.trim() !== '') out.push({ where: `variable ${v.name}`, expr });
  }
  return out;
}

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function loadAlertRules(file = path.join(REPO_ROOT, 'ops/prometheus/alerts.yml')): AlertRule[] {
  const doc = parse(readFileSync(file, 'utf8')) as { groups: { name: string; rules: (AlertRule | { record: string; expr: string })[] }[] };
  return doc.groups.flatMap((g) => g.rules.filter((r): r is AlertRule => 'alert' in r));
}

export function loadDashboard(file = path.join(REPO_ROOT, 'ops/grafana/eventrelay.json')): Parameters<typeof dashboardQueries>[0] {
  return JSON.parse(readFileSync(file, 'utf8')) as Parameters<typeof dashboardQueries>[0];
}

/** Every query of ops/grafana/eventrelay.json and ops/prometheus/alerts.yml. */
export function opsQueries(): OpsQuery[] {
  return [...dashboardQueries(loadDashboard()), ...loadAlertRules().map((r) => ({ where: `alert ${r.alert}`, expr: r.expr }))];
}

/** Metric name → where it is queried, for every metric the dashboard and the alerts read. */
export function opsMetricNames(): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const q of opsQueries()) {
    for (const name of promqlMetricNames(q.expr)) names.set(name, [...(names.get(name) ?? []), q.where]);
  }
  return names;
}
