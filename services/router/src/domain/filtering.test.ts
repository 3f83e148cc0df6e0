import { routeEntryOf, type Destination } from '@eventrelay/config';
import { readsWholeCall, refusalsOf } from './filtering.js';

const destination = (filters: Destination['filters'], enabled = true): Destination => ({
  id: 'd',
  name: 'Webhooks',
  enabled,
  sourceIds: ['s'],
  settings: { webhooks: [{ url: 'https://d.example/in' }] },
  ...(filters ? { filters } : {}),
});

describe('what drop and only rules read of a call', () => {
  it.each([
    ['no filters', undefined, false],
    [
      'type, event and userId: held by the route entry',
      [
        {
          only: {
            all: [
              { field: { path: 'type', equals: 'track' } },
              { field: { path: 'event', exists: true } },
              { field: { path: 'userId', starts_with: 'u-' } },
            ],
          },
        },
      ],
      false,
    ],
    ['integrations', [{ drop: { field: { path: 'integrations.Webhooks', equals: false } } }], false],
    ['a property', [{ drop: { field: { path: 'properties.test', equals: true } } }], true],
    ['a sample (anonymousId is not in the entry)', [{ only: { sample: { percent: 10 } } }], true],
    [
      'field rules only: applied at delivery',
      [{ dropFields: ['properties.email'], if: { field: { path: 'context.ip', exists: true } } }],
      false,
    ],
  ] as const)('%s → whole call: %s', (_name, filters, whole) => {
    expect(readsWholeCall(destination(filters as Destination['filters']))).toBe(whole);
  });

  it('a disabled destination reads nothing', () => {
    expect(readsWholeCall(destination([{ drop: { field: { path: 'properties.test', equals: true } } }], false))).toBe(false);
  });

  it('tests the whole call when it was read, else the entry, and names each refusing destination', () => {
    const call = {
      type: 'track' as const,
      event: 'E',
      userId: 'u',
      messageId: 'm',
      timestamp: 't',
      receivedAt: 't',
      properties: { test: true },
    };
    const entry = routeEntryOf(call, 's', 0, 0);
    const noTests = { ...destination([{ drop: { field: { path: 'properties.test', equals: true } } }]), id: 'no-tests' };
    const tracks = { ...destination([{ only: { field: { path: 'type', equals: 'track' } } }]), id: 'tracks' };
    const pages = { ...destination([{ only: { field: { path: 'type', equals: 'page' } } }]), id: 'pages' };
    expect(refusalsOf(entry, [noTests, tracks, pages], call)).toEqual(
      new Map([
        ['no-tests', 'drop'],
        ['pages', 'only'],
      ]),
    );
    // Without the call, properties.test is absent: the drop rule does not hold.
    expect(refusalsOf(entry, [noTests, tracks, pages], undefined)).toEqual(new Map([['pages', 'only']]));
    expect(refusalsOf(entry, [tracks], call)).toBeUndefined();
  });
});
