/**
 * The alert rules through the real promtool (Prometheus 2.x): syntax and templates checked, and
 * the unit tests of ops/prometheus/alerts.test.yml run. Then the test file itself is held to what
 * it promises, one case where each alert fires and one where it does not, and every alert to what
 * an operator needs: a severity, a summary, a description and a runbook section that exists.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { REPO_ROOT, loadAlertRules } from './promql-names';

const run = promisify(execFile);
const PROMTOOL = '/usr/bin/promtool';
const ALERTS = path.join(REPO_ROOT, 'ops/prometheus/alerts.yml');
const ALERTS_TEST = path.join(REPO_ROOT, 'ops/prometheus/alerts.test.yml');

async function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(PROMTOOL, args, { cwd: REPO_ROOT, timeout: 20_000 });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string; message: string };
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}` };
  }
}

/** GitHub's heading anchors: lower case, punctuation other than - and _ dropped, spaces to -, repeats numbered. */
function githubAnchors(markdown: string): string[] {
  const anchors: string[] = [];
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const f = /^\s{0,3}(```+|~~~+)/.exec(line);
    if (f) {
      const marker = (f[1] as string)[0] as string;
      if (fence === undefined) fence = marker;
      else if (fence === marker) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const h = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const text = (h[1] as string)
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*]/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.push(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

interface AlertRuleTest {
  eval_time: string;
  alertname: string;
  exp_alerts?: unknown[] | null;
}

interface RuleTestFile {
  rule_files: string[];
  tests: { alert_rule_test?: AlertRuleTest[] }[];
}

describe('alert rules and their promtool unit tests', () => {
  const alerts = loadAlertRules(ALERTS);
  const testFile = parse(readFileSync(ALERTS_TEST, 'utf8')) as RuleTestFile;
  const cases = testFile.tests.flatMap((t) => t.alert_rule_test ?? []);

  it('pass promtool check rules', async () => {
    const result = await promtool('check', 'rules', path.relative(REPO_ROOT, ALERTS));
    expect(result).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });
    expect(result.output).toContain(`${alerts.length} rules found`);
  });

  it('pass promtool test rules', async () => {
    const result = await promtool('test', 'rules', path.relative(REPO_ROOT, ALERTS_TEST));
    expect(result).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });
    expect(result.output).not.toMatch(/FAILED/);
  });

  it('unit-test the rule file the compose stack loads', () => {
    expect(testFile.rule_files.map((f) => path.resolve(path.dirname(ALERTS_TEST), f))).toEqual([ALERTS]);
  });

  it('test every alert in a case where it fires and in one where it does not', () => {
    expect(alerts.length).toBeGreaterThan(0);
    for (const alert of alerts) {
      const mine = cases.filter((c) => c.alertname === alert.alert);
      expect({
        alert: alert.alert,
        firing: mine.some((c) => (c.exp_alerts ?? []).length > 0),
        quiet: mine.some((c) => (c.exp_alerts ?? []).length === 0),
      }).toEqual({ alert: alert.alert, firing: true, quiet: true });
    }
  });

  it('test no alert that does not exist (a misspelt name would pass with empty exp_alerts)', () => {
    const names = new Set(alerts.map((a) => a.alert));
    expect(cases.length).toBeGreaterThan(0);
    expect(cases.map((c) => c.alertname).filter((n) => !names.has(n))).toEqual([]);
  });

  it('give every alert a severity, a summary, a description and a runbook section that exists', () => {
    const anchors = githubAnchors(readFileSync(path.join(REPO_ROOT, 'docs/runbook.md'), 'utf8'));
    for (const alert of alerts) {
      expect({ alert: alert.alert, severity: alert.labels?.['severity'] }).toEqual({
        alert: alert.alert,
        severity: expect.stringMatching(/^(page|ticket|critical|warning|info)$/),
      });
      expect((alert.annotations?.['summary'] ?? '').trim()).not.toBe('');
      expect((alert.annotations?.['description'] ?? '').trim()).not.toBe('');
      const url = alert.annotations?.['runbook_url'] ?? '';
      const m = /^https:\/\/\S+\/docs\/runbook\.md#(\S+)$/.exec(url);
      expect({ alert: alert.alert, url, anchored: m !== null }).toEqual({ alert: alert.alert, url, anchored: true });
      expect({ alert: alert.alert, anchor: m?.[1], exists: anchors.includes(m?.[1] ?? '') }).toEqual({
        alert: alert.alert,
        anchor: m?.[1],
        exists: true,
      });
    }
  });

  it('compute GitHub anchors as GitHub does', () => {
    expect(
      githubAnchors('# Runbook\n## Before you start\n```bash\n# not a heading\n```\n### `EventrelayX` fires!\n## Scaling\n## Scaling\n'),
    ).toEqual(['runbook', 'before-you-start', 'eventrelayx-fires', 'scaling', 'scaling-1']);
  });
});
