/**
 * The web console's bundle budget: everything the first page load fetches (the scripts and
 * stylesheets index.html names, and what they preload) is at most 100 KiB gzip-compressed. The
 * console is served by the admin service on slow links too (a phone on call), and the budget
 * keeps a new dependency from doubling it unnoticed. Also: index.html has nothing inline that the
 * strict Content-Security-Policy would block, and nothing loaded from another origin.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { REPO_ROOT } from '@eventrelay/testkit';

const BUDGET_GZIP_BYTES = 100 * 1024;
const DIST = path.join(REPO_ROOT, 'packages', 'console', 'dist');
const INDEX = path.join(DIST, 'index.html');

function built(): string {
  if (!existsSync(INDEX)) throw new Error(`${INDEX} is missing: run \`pnpm build\` first (it builds the console; scripts/test.sh does)`);
  return readFileSync(INDEX, 'utf8');
}

/** The /console/assets/... URLs index.html loads: module scripts, stylesheets, module preloads. */
function initialAssets(html: string): string[] {
  return [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
}

describe('console bundle', () => {
  it(`loads at most ${BUDGET_GZIP_BYTES / 1024} KiB (gzip) of JS and CSS on the first page`, () => {
    const assets = initialAssets(built());
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    let total = 0;
    for (const asset of assets) {
      expect(asset).toMatch(/^\/console\/assets\/[A-Za-z0-9_.-]+\.(js|css)$/);
      total += gzipSync(readFileSync(path.join(DIST, asset.slice('/console/'.length))), { level: 9 }).length;
    }
    expect({ gzipBytes: total, withinBudget: total <= BUDGET_GZIP_BYTES }).toEqual({ gzipBytes: total, withinBudget: true });
  });

  it('has no inline script or style and no other origin in index.html (the CSP allows only self)', () => {
    const html = built();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style\b|\sstyle="/);
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
  });

  it('names its assets by content hash, so the admin service may cache them as immutable', () => {
    for (const asset of initialAssets(built())) expect(path.basename(asset)).toMatch(/-[A-Za-z0-9_-]{8,}\.(js|css)$/);
  });
});
