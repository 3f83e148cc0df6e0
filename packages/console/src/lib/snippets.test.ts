import { GO_IMPORT_PATH, snippet } from './snippets';

const URL_ = 'https://events.example.com/';
const KEY = 'wk_abc-DEF_123';

describe('snippets', () => {
  it('fills the Node SDK snippet with the host and key', () => {
    const text = snippet('analytics-node', URL_, KEY);
    expect(text).toContain(`new Analytics({ writeKey: "wk_abc-DEF_123", host: "https://events.example.com" })`);
    expect(text).toContain('closeAndFlush');
  });

  it('points analytics.js at the intake without a CDN', () => {
    const text = snippet('analytics-js', 'http://localhost:8080', KEY);
    expect(text).toContain(`apiHost: "localhost:8080/v1", protocol: "http"`);
    expect(text).toContain(`writeKey: "wk_abc-DEF_123"`);
  });

  it('uses the Go client import path from its README', () => {
    const text = snippet('go', URL_, KEY);
    expect(text).toContain(`import analytics "${GO_IMPORT_PATH}"`);
    expect(text).toContain(`client.Endpoint = "https://events.example.com"`);
    expect(text).toContain(`analytics.New("wk_abc-DEF_123")`);
  });

  it('quotes the key for the shell in curl', () => {
    expect(snippet('curl', URL_, KEY)).toContain(`curl -sS 'https://events.example.com/v1/track' \\\n  -u 'wk_abc-DEF_123:'`);
    expect(snippet('curl', URL_, "it's")).toContain(`-u 'it'\\''s:'`);
  });
});
