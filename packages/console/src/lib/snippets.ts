/**
 * Copy-paste snippets that send a first call to a source, filled in with this installation's
 * intake URL and the source's write key.
 */
export type SnippetKind = 'analytics-node' | 'analytics-js' | 'go' | 'curl';

export const SNIPPET_LABELS: Readonly<Record<SnippetKind, string>> = {
  'analytics-node': 'Node.js (@segment/analytics-node)',
  'analytics-js': 'Browser (analytics.js)',
  go: 'Go (packages/analytics-go)',
  curl: 'curl',
};

export const GO_IMPORT_PATH = 'github.com/eventrelay/eventrelay/packages/analytics-go';

/** Strings go into JS, Go and shell source: quote them for each, not by hand. */
const js = (s: string) => JSON.stringify(s);
const shell = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function snippet(kind: SnippetKind, intakeUrl: string, writeKey: string): string {
  const host = intakeUrl.replace(/\/+$/, '');
  switch (kind) {
    case 'analytics-node':
      return [
        `import { Analytics } from '@segment/analytics-node';`,
        ``,
        `const analytics = new Analytics({ writeKey: ${js(writeKey)}, host: ${js(host)} });`,
        `analytics.identify({ userId: 'user-1', traits: { plan: 'pro' } });`,
        `analytics.track({ userId: 'user-1', event: 'Signed Up', properties: { source: 'console' } });`,
        `await analytics.closeAndFlush();`,
      ].join('\n');
    case 'analytics-js':
      return [
        `import { AnalyticsBrowser } from '@segment/analytics-next';`,
        ``,
        `// The intake serves no CDN settings: give them inline and point Segment.io at this host.`,
        `const analytics = AnalyticsBrowser.load(`,
        `  { writeKey: ${js(writeKey)}, cdnSettings: { integrations: { 'Segment.io': { apiHost: ${js(host.replace(/^https?:\/\//, '') + '/v1')}, protocol: ${js(host.startsWith('https:') ? 'https' : 'http')} } } } },`,
        `);`,
        `analytics.track('Signed Up', { source: 'console' });`,
      ].join('\n');
    case 'go':
      return [
        `package main`,
        ``,
        `import analytics "${GO_IMPORT_PATH}"`,
        ``,
        `func main() {`,
        `\tclient := analytics.New(${js(writeKey)})`,
        `\tclient.Endpoint = ${js(host)}`,
        `\tdefer client.Close()`,
        ``,
        `\tclient.Track(&analytics.Track{UserId: "user-1", Event: "Signed Up"})`,
        `}`,
      ].join('\n');
    case 'curl':
      return [
        `curl -sS ${shell(`${host}/v1/track`)} \\`,
        `  -u ${shell(`${writeKey}:`)} \\`,
        `  -H 'Content-Type: application/json' \\`,
        `  -d '{"userId":"user-1","event":"Signed Up","properties":{"source":"console"}}'`,
      ].join('\n');
  }
}
