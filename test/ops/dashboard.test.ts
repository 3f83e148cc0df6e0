/**
 * The Grafana dashboard's structure: every panel queries through the datasource variable, sits on
 * the grid with a unique id, and links only to documents that exist. Its metric names are checked
 * against running processes in metric-names.int.test.ts and prometheus.int.test.ts.
 */
import path from 'node:path';
import { REPO_ROOT as ROOT, dashboardPanels, loadDashboard } from './promql-names';
import { read, isFile } from './deployment';

// ------------------------------------------------------------------------------- dashboard

describe('ops/grafana/eventrelay.json', () => {
  const dashboard = loadDashboard() as unknown as {
    panels: ReturnType<typeof dashboardPanels>;
    links?: { url?: string }[];
    templating: { list: { name: string; type: string; query?: unknown; datasource?: { uid?: string } }[] };
  };
  type PanelJson = ReturnType<typeof dashboardPanels>[number] & {
    gridPos?: Record<string, unknown>;
    datasource?: { type?: string; uid?: string };
    targets?: { expr?: string; datasource?: { uid?: string } }[];
  };
  const panels = dashboardPanels(dashboard) as PanelJson[];
  const usesVariable = (uid: string | undefined) => uid === '${datasource}' || uid === '$datasource';

  it('is valid JSON with panels', () => {
    expect(() => JSON.parse(read('ops/grafana/eventrelay.json')) as unknown).not.toThrow();
    expect(panels.length).toBeGreaterThan(0);
  });

  it("gives every panel, rows' panels included, a query", () => {
    for (const p of panels.filter((x) => x.type !== 'row')) {
      const exprs = (p.targets ?? []).map((t) => t.expr ?? '').filter((e) => e.trim() !== '');
      expect({ panel: p.title, queries: exprs.length > 0 }).toEqual({ panel: p.title, queries: true });
    }
    // A row holds no queries of its own.
    for (const row of panels.filter((x) => x.type === 'row')) expect(row.targets ?? []).toEqual([]);
  });

  it('queries through the datasource template variable', () => {
    const variable = dashboard.templating.list.find((v) => v.name === 'datasource');
    expect(variable).toMatchObject({ type: 'datasource', query: 'prometheus' });
    for (const p of panels.filter((x) => x.type !== 'row')) {
      expect({ panel: p.title, uid: usesVariable(p.datasource?.uid) }).toEqual({ panel: p.title, uid: true });
      for (const t of p.targets ?? [])
        if (t.datasource !== undefined)
          expect({ panel: p.title, uid: usesVariable(t.datasource.uid) }).toEqual({ panel: p.title, uid: true });
    }
    for (const v of dashboard.templating.list.filter((x) => x.type === 'query')) expect(usesVariable(v.datasource?.uid)).toBe(true);
  });

  it('places every panel on the grid, with unique ids', () => {
    for (const p of panels) {
      const g = p.gridPos ?? {};
      expect({ panel: p.title, grid: ['h', 'w', 'x', 'y'].every((k) => typeof g[k] === 'number') }).toEqual({ panel: p.title, grid: true });
      expect((g['x'] as number) + (g['w'] as number)).toBeLessThanOrEqual(24);
    }
    const ids = panels.map((p) => p.id);
    expect(ids.every((id) => typeof id === 'number')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('links to documents of the repository that exist', () => {
    const links = (dashboard.links ?? []).map((l) => l.url ?? '');
    expect(links.length).toBeGreaterThan(0);
    for (const url of links) {
      const m = /\/blob\/[^/]+\/([^#?]+)/.exec(url);
      expect({ url, file: m !== null && isFile(path.join(ROOT, m[1] as string)) }).toEqual({ url, file: true });
    }
  });
});
