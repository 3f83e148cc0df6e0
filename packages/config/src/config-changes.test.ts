import { exportConfig, planUpsert, type ConfigSnapshot } from './config-changes.js';
import { checkConfig } from './config-file.js';
import type { Destination } from './generated/contracts.js';

const rotating: Destination = {
  id: 'hooks',
  name: 'Webhooks',
  enabled: true,
  sourceIds: [],
  settings: {
    webhooks: [{ url: 'https://hooks.example.com/in' }],
    sharedSecret: 'whsec_new_secret_0002',
    previousSecret: { secret: 'whsec_old_secret_0001', expiresAt: '2026-11-26T00:00:00.000Z' },
    timeoutMs: 8000,
  },
};
const snapshot: ConfigSnapshot = { version: 3, sources: new Map(), destinations: new Map([['hooks', rotating]]), audiences: new Map() };

describe('a destination in a secret rotation', () => {
  it('exports without its current or previous secret', () => {
    const exported = JSON.stringify(exportConfig(snapshot));
    expect(exported).not.toContain('whsec_');
    expect(exportConfig(snapshot).destinations[0]!.settings).toEqual({
      webhooks: [{ url: 'https://hooks.example.com/in' }],
      timeoutMs: 8000,
    });
  });

  it('keeps both secrets when its export is applied, so applying a file does not end the overlap', () => {
    const changes = planUpsert(snapshot, checkConfig(exportConfig(snapshot), 'export.json'));
    expect(changes).toEqual([{ kind: 'put-destination', destination: rotating }]);
  });

  it('takes the file’s secret, without the stored previous secret, when the file gives one', () => {
    const file = exportConfig(snapshot);
    const withSecret = {
      ...file,
      destinations: [{ ...file.destinations[0]!, settings: { ...file.destinations[0]!.settings, sharedSecret: 'from-the-file' } }],
    };
    const [change] = planUpsert(snapshot, checkConfig(withSecret, 'file.json'));
    expect(change).toEqual({
      kind: 'put-destination',
      destination: {
        ...rotating,
        settings: { webhooks: rotating.settings.webhooks, timeoutMs: 8000, sharedSecret: 'from-the-file' },
      },
    });
  });
});

describe('a destination delivery changed itself', () => {
  const gone: Destination = {
    id: 'gone',
    name: 'Webhooks',
    enabled: true,
    sourceIds: [],
    settings: {
      webhooks: [
        { url: 'https://a.example.com/in', disabled: true, disabledReason: 'answered 410 Gone at 2026-11-25T10:00:00.000Z' },
        { url: 'https://b.example.com/in' },
      ],
      sharedSecret: 'whsec_kept_0001',
      standardWebhooks: true,
    },
  };
  const stored: ConfigSnapshot = { version: 1, sources: new Map(), destinations: new Map([['gone', gone]]), audiences: new Map() };

  it('round-trips: its export (no secret, standardWebhooks on) applies, keeping the secret and the disabled URL', () => {
    const changes = planUpsert(stored, checkConfig(exportConfig(stored), 'export.json'));
    expect(changes).toEqual([{ kind: 'put-destination', destination: gone }]);
  });

  it('keeps a URL disabled by a 410 when a file lists it without `disabled`, and re-enables it on `disabled: false`', () => {
    const file = { sources: [], audiences: [], destinations: [{ ...gone, settings: { webhooks: [{ url: 'https://a.example.com/in' }] } }] };
    const [kept] = planUpsert(stored, checkConfig(file, 'file.json'));
    expect(kept).toMatchObject({ destination: { settings: { webhooks: [gone.settings.webhooks[0]] } } });
    const enabled = {
      ...file,
      destinations: [{ ...gone, settings: { webhooks: [{ url: 'https://a.example.com/in', disabled: false }] } }],
    };
    const [reenabled] = planUpsert(stored, checkConfig(enabled, 'file.json'));
    expect(reenabled).toMatchObject({ destination: { settings: { webhooks: [{ url: 'https://a.example.com/in', disabled: false }] } } });
  });
});
