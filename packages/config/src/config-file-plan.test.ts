import { emptySnapshot, type ConfigSnapshot } from './config-changes.js';
import { checkConfig } from './config-file.js';
import { planConfigFile } from './config-file-plan.js';
import type { Destination, Source } from './generated/contracts.js';

const NOW = '2026-11-23T00:00:00.000Z';
const source: Source = { id: 'web', name: 'Web', type: 'web', writeKey: 'file-write-key-0001' };
const destination: Destination = {
  id: 'hooks',
  name: 'Webhooks',
  enabled: true,
  sourceIds: ['web'],
  settings: {
    webhooks: [{ url: 'https://hooks.example.com/in', headers: { Authorization: 'Bearer file' } }],
    sharedSecret: 'whsec_file_0001',
  },
};
const file = checkConfig({ sources: [source], destinations: [destination] }, 'test.json');
const options = (mode: 'seed' | 'sync') => ({ mode, path: '/etc/eventrelay/config.json', now: NOW });

function snapshot(version: number, sources: Source[], destinations: Destination[]): ConfigSnapshot {
  return {
    version,
    sources: new Map(sources.map((s) => [s.id, s])),
    destinations: new Map(destinations.map((d) => [d.id, d])),
    audiences: new Map(),
  };
}

describe('planConfigFile', () => {
  it.each(['seed', 'sync'] as const)('%s into a prefix never written to: creates everything, each audited as the file', (mode) => {
    const plan = planConfigFile(emptySnapshot, file, options(mode));
    expect(plan.result).toEqual({ outcome: 'applied', changed: 2 });
    expect(plan.changes.map((c) => c.kind)).toEqual(['put-source', 'put-destination']);
    expect(plan.audit).toEqual([
      { at: NOW, tokenId: 'config-file', action: 'source.create', targetId: 'web', details: { file: '/etc/eventrelay/config.json', mode } },
      {
        at: NOW,
        tokenId: 'config-file',
        action: 'destination.create',
        targetId: 'hooks',
        details: { file: '/etc/eventrelay/config.json', mode },
      },
    ]);
  });

  it('seed leaves a store that was ever written to alone, even one emptied since', () => {
    const rotated = { ...source, writeKey: 'rotated-through-api-0002' };
    expect(planConfigFile(snapshot(7, [rotated], [destination]), file, options('seed'))).toEqual({
      changes: [],
      result: { outcome: 'skipped', changed: 0 },
    });
    expect(planConfigFile(snapshot(3, [], []), file, options('seed')).changes).toEqual([]);
  });

  it('sync writes back what the API changed, naming the fields and never their values', () => {
    const rotated = { ...source, writeKey: 'rotated-through-api-0002' };
    const renamed = { ...destination, enabled: false, settings: { ...destination.settings, sharedSecret: 'whsec_api_0002' } };
    const plan = planConfigFile(snapshot(7, [rotated], [renamed]), file, options('sync'));
    expect(plan.changes).toEqual([
      { kind: 'put-source', source, previousWriteKey: 'rotated-through-api-0002' },
      { kind: 'put-destination', destination },
    ]);
    expect(plan.audit).toEqual([
      {
        at: NOW,
        tokenId: 'config-file',
        action: 'source.update',
        targetId: 'web',
        details: { file: '/etc/eventrelay/config.json', mode: 'sync', fields: ['writeKey'] },
      },
      {
        at: NOW,
        tokenId: 'config-file',
        action: 'destination.update',
        targetId: 'hooks',
        details: { file: '/etc/eventrelay/config.json', mode: 'sync', fields: ['enabled', 'settings.sharedSecret'] },
      },
    ]);
    expect(JSON.stringify(plan.audit)).not.toMatch(/file-write-key|whsec/);
  });

  it('sync writes nothing when the store already holds what the file says (key order does not count)', () => {
    const reordered = { settings: destination.settings, sourceIds: ['web'], enabled: true, name: 'Webhooks', id: 'hooks' } as Destination;
    expect(planConfigFile(snapshot(9, [source], [reordered]), file, options('sync'))).toEqual({
      changes: [],
      audit: [],
      result: { outcome: 'unchanged', changed: 0 },
    });
  });

  it('sync keeps stored secrets and headers the file leaves out, and does not count them as changes', () => {
    const exported = checkConfig(
      { sources: [source], destinations: [{ ...destination, settings: { webhooks: [{ url: 'https://hooks.example.com/in' }] } }] },
      'export.json',
    );
    expect(planConfigFile(snapshot(9, [source], [destination]), exported, options('sync')).changes).toEqual([]);
  });
});
