import { adminBodyValidator } from '@eventrelay/config';
import settingsSchema from '@eventrelay/config/schemas/webhook-settings.schema.json';
import { fieldMessages } from './api-errors';
import {
  createBody,
  emptyForm,
  formFromView,
  localProblems,
  patchBody,
  type DestinationForm,
  type DestinationView,
} from './destination-form';
import {
  FILTERS_EXAMPLE,
  MAPPING_EXAMPLE,
  emptyShaping,
  parseJsonText,
  shapingMessage,
  shapingPartOf,
  type ShapingInput,
} from './destination-shaping';

const FILTERS = [{ name: 'no tests', drop: { field: { path: 'properties.test', equals: true } } }];
const MAPPING = { event: { '@path': 'event' }, total: { '@path': 'properties.total' } };

const form = (shaping: Partial<ShapingInput>): DestinationForm => ({
  ...emptyForm(),
  webhooks: [{ url: 'https://a.test', headers: [] }],
  shaping: { ...emptyShaping(), ...shaping },
});

const view = (
  extra: Omit<Partial<DestinationView>, 'settings'> & { settings?: Partial<DestinationView['settings']> },
): DestinationView => ({
  id: 'dst_1',
  name: 'Webhooks',
  enabled: true,
  sourceIds: [],
  ...extra,
  settings: { webhooks: [{ url: 'https://a.test' }], sharedSecret: { set: false }, ...extra.settings },
});

describe('filters, mapping and batching in the destination form', () => {
  it('parses JSON text of the shape asked for, empty text being none', () => {
    expect(parseJsonText('  \n', 'list')).toEqual({ kind: 'empty' });
    expect(parseJsonText('[]', 'list')).toEqual({ kind: 'value', value: [] });
    expect(parseJsonText('{"a": 1}', 'object')).toEqual({ kind: 'value', value: { a: 1 } });
    expect(parseJsonText('[{"drop": }]', 'list')).toMatchObject({ kind: 'invalid', message: expect.stringMatching(/^not valid JSON: /) });
    expect(parseJsonText('{}', 'list')).toEqual({ kind: 'invalid', message: 'must be a JSON list of rules: [ … ]' });
    expect(parseJsonText('[1]', 'object')).toEqual({ kind: 'invalid', message: 'must be a JSON object: { … }' });
    expect(parseJsonText('null', 'object')).toEqual({ kind: 'invalid', message: 'must be a JSON object: { … }' });
  });

  it('shows the hints’ examples as JSON the API takes', () => {
    expect(createBody(form({ filters: FILTERS_EXAMPLE, mapping: MAPPING_EXAMPLE }))).toMatchObject({
      filters: FILTERS,
      settings: { mapping: MAPPING },
    });
    const validate = adminBodyValidator('DestinationCreate');
    expect(validate(createBody(form({ filters: FILTERS_EXAMPLE, mapping: MAPPING_EXAMPLE })))).toBe(true);
  });

  it('refuses JSON that does not parse and batch bounds out of the schema’s range, next to their fields', () => {
    const bad = form({ filters: '[{', mapping: '[]', batching: { on: true, maxCalls: '0', maxBytes: '1.5' } });
    const { maxCalls, maxBytes } = settingsSchema.properties.batching.properties;
    expect(localProblems(bad)).toEqual({
      filters: expect.stringMatching(/^not valid JSON/),
      'settings.mapping': 'must be a JSON object: { … }',
      'settings.batching.maxCalls': `enter a whole number between ${maxCalls.minimum} and ${maxCalls.maximum}`,
      'settings.batching.maxBytes': `enter a whole number between ${maxBytes.minimum} and ${maxBytes.maximum}`,
    });
    // Bounds typed while batching is off are not checked: they are not sent.
    expect(localProblems(form({ batching: { on: false, maxCalls: '0', maxBytes: '' } }))).toEqual({});
  });

  it('adds what is set to a create body and leaves the rest out', () => {
    expect(createBody(form({}))).toEqual({
      name: 'Webhooks',
      enabled: false,
      sourceIds: [],
      settings: { webhooks: [{ url: 'https://a.test' }] },
    });
    const body = createBody(
      form({ filters: JSON.stringify(FILTERS), mapping: JSON.stringify(MAPPING), batching: { on: true, maxCalls: ' 50 ', maxBytes: '' } }),
    );
    expect(body).toEqual({
      name: 'Webhooks',
      enabled: false,
      sourceIds: [],
      settings: { webhooks: [{ url: 'https://a.test' }], mapping: MAPPING, batching: { maxCalls: 50 } },
      filters: FILTERS,
    });
    expect(adminBodyValidator('DestinationCreate')(body)).toBe(true);
    expect(createBody(form({ batching: { on: true, maxCalls: '', maxBytes: '' } })).settings).toMatchObject({ batching: {} });
  });

  it('reads what is stored into the editors, and patches it back unchanged', () => {
    const stored = view({ filters: FILTERS, settings: { mapping: MAPPING, batching: { maxBytes: 2048 } } });
    const read = formFromView(stored);
    expect(JSON.parse(read.shaping.filters)).toEqual(FILTERS);
    expect(JSON.parse(read.shaping.mapping)).toEqual(MAPPING);
    expect(read.shaping.batching).toEqual({ on: true, maxCalls: '', maxBytes: '2048' });
    const patch = patchBody(read);
    expect(patch).toMatchObject({ filters: FILTERS, settings: { mapping: MAPPING, batching: { maxBytes: 2048 } } });
    expect(adminBodyValidator('DestinationPatch')(patch)).toBe(true);
  });

  it('removes (null) what was stored and has been emptied, and sends nothing for what never was', () => {
    const stored = formFromView(view({ filters: FILTERS, settings: { mapping: MAPPING, batching: {} } }));
    const emptied = { ...stored, shaping: { filters: ' ', mapping: '', batching: { ...stored.shaping.batching, on: false } } };
    const patch = patchBody(emptied);
    expect(patch).toMatchObject({ filters: null, settings: { mapping: null, batching: null } });
    expect(adminBodyValidator('DestinationPatch')(patch)).toBe(true);

    const never = patchBody(formFromView(view({})));
    expect(never).not.toHaveProperty('filters');
    expect(never['settings']).not.toHaveProperty('mapping');
    expect(never['settings']).not.toHaveProperty('batching');
    // An empty list typed is sent as such: it removes every rule too.
    expect(patchBody({ ...stored, shaping: { ...stored.shaping, filters: '[]' } })).toMatchObject({ filters: [] });
  });

  it('puts each API problem under filters, mapping or batching next to that editor, naming where in the JSON', () => {
    expect(shapingPartOf('filters')).toBe('filters');
    expect(shapingPartOf('filters[0].drop.field.path')).toBe('filters');
    expect(shapingPartOf('settings.mapping.total.@path')).toBe('mapping');
    expect(shapingPartOf('settings.batching.maxCalls')).toBe('batching');
    expect(shapingPartOf('settings.mappings')).toBeUndefined();
    expect(shapingPartOf('filtersX')).toBeUndefined();
    expect(shapingPartOf('settings.webhooks[0].url')).toBeUndefined();

    const errors = fieldMessages([
      { field: 'filters[0].drop.field.path', message: 'must be a path' },
      { field: 'filters[2]', message: 'has two actions' },
      { field: '/settings/mapping/total/@path', message: 'names no field' },
      { field: 'settings.batching', message: 'is not a known field' },
      { field: 'settings.batching.maxCalls', message: 'must be <= 1000' },
    ]);
    expect(shapingMessage('filters', errors)).toBe('rule 1 (drop.field.path): must be a path; rule 3: has two actions');
    expect(shapingMessage('mapping', errors)).toBe('total.@path: names no field');
    // maxCalls has an input of its own.
    expect(shapingMessage('batching', errors)).toBe('is not a known field');
    expect(errors['settings.batching.maxCalls']).toBe('must be <= 1000');
    expect(shapingMessage('filters', {})).toBeUndefined();
  });
});
