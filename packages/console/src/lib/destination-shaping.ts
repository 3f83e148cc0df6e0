/**
 * What a destination is sent, as the form edits it: its filter rules and its mapping template,
 * each typed as JSON text, and batching as a switch with two optional bounds. The text is parsed
 * here so a typo shows next to its editor before anything is sent; the rules' and template's
 * meaning is left to the API, which checks them on every save with the same field paths.
 */
import type { Batching, DestinationFilters, DestinationView } from '@eventrelay/config';
// The bounds come from the contract itself, so the form cannot drift from what the API accepts.
import settingsSchema from '@eventrelay/config/schemas/webhook-settings.schema.json';

export interface BatchingInput {
  readonly on: boolean;
  /** Empty: the service's default. */
  readonly maxCalls: string;
  readonly maxBytes: string;
}

export interface ShapingInput {
  /** A JSON list of rules; empty text means no rules. */
  readonly filters: string;
  /** A JSON object template; empty text means the default body. */
  readonly mapping: string;
  readonly batching: BatchingInput;
}

/** Which of the three the stored destination had set: only those are removed (sent as null) when emptied. */
export type ShapingPart = 'filters' | 'mapping' | 'batching';

export const FILTERS_EXAMPLE = '[{"name": "no tests", "drop": {"field": {"path": "properties.test", "equals": true}}}]';
export const MAPPING_EXAMPLE = '{"event": {"@path": "event"}, "total": {"@path": "properties.total"}}';

/** The field paths the API names for each editor; every problem under one shows next to it. */
const SHAPING_FIELDS: Record<ShapingPart, string> = {
  filters: 'filters',
  mapping: 'settings.mapping',
  batching: 'settings.batching',
};

export const emptyShaping = (): ShapingInput => ({ filters: '', mapping: '', batching: { on: false, maxCalls: '', maxBytes: '' } });

const pretty = (value: unknown): string => JSON.stringify(value, null, 2);

export function shapingFromView(view: DestinationView): { input: ShapingInput; stored: ShapingPart[] } {
  const { mapping, batching } = view.settings;
  const filters = view.filters ?? [];
  return {
    input: {
      filters: filters.length > 0 ? pretty(filters) : '',
      mapping: mapping !== undefined ? pretty(mapping) : '',
      batching: {
        on: batching !== undefined,
        maxCalls: batching?.maxCalls !== undefined ? String(batching.maxCalls) : '',
        maxBytes: batching?.maxBytes !== undefined ? String(batching.maxBytes) : '',
      },
    },
    stored: [
      ...(filters.length > 0 ? (['filters'] as const) : []),
      ...(mapping !== undefined ? (['mapping'] as const) : []),
      ...(batching !== undefined ? (['batching'] as const) : []),
    ],
  };
}

export type ParsedJson =
  { readonly kind: 'empty' } | { readonly kind: 'value'; readonly value: unknown } | { readonly kind: 'invalid'; readonly message: string };

/** JSON text of the shape asked for; empty (or only spaces) is its own case, so it can mean "none". */
export function parseJsonText(text: string, shape: 'list' | 'object'): ParsedJson {
  if (text.trim() === '') return { kind: 'empty' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { kind: 'invalid', message: `not valid JSON: ${(err as Error).message}` };
  }
  const isList = Array.isArray(value);
  const isObject = typeof value === 'object' && value !== null && !isList;
  if (shape === 'list' && !isList) return { kind: 'invalid', message: 'must be a JSON list of rules: [ … ]' };
  if (shape === 'object' && !isObject) return { kind: 'invalid', message: 'must be a JSON object: { … }' };
  return { kind: 'value', value };
}

const BATCH_BOUNDS = settingsSchema.properties.batching.properties;

type ParsedCount = { kind: 'default' } | { kind: 'value'; value: number } | { kind: 'invalid'; message: string };

function parseCount(text: string, { minimum, maximum }: { minimum: number; maximum: number }): ParsedCount {
  if (text.trim() === '') return { kind: 'default' };
  const n = Number(text.trim());
  return Number.isInteger(n) && n >= minimum && n <= maximum
    ? { kind: 'value', value: n }
    : { kind: 'invalid', message: `enter a whole number between ${minimum} and ${maximum}` };
}

/** The batching the form asks for: undefined when off; bounds left empty take the service's defaults. */
function batchingValue(input: BatchingInput): Batching | undefined {
  if (!input.on) return undefined;
  const calls = parseCount(input.maxCalls, BATCH_BOUNDS.maxCalls);
  const bytes = parseCount(input.maxBytes, BATCH_BOUNDS.maxBytes);
  return {
    ...(calls.kind === 'value' ? { maxCalls: calls.value } : {}),
    ...(bytes.kind === 'value' ? { maxBytes: bytes.value } : {}),
  };
}

export const batchingField = (bound: 'maxCalls' | 'maxBytes') => `${SHAPING_FIELDS.batching}.${bound}`;

/** Problems found without the API, keyed by the field paths the API would use. */
export function shapingProblems(input: ShapingInput): Record<string, string> {
  const out: Record<string, string> = {};
  const filters = parseJsonText(input.filters, 'list');
  if (filters.kind === 'invalid') out[SHAPING_FIELDS.filters] = filters.message;
  const mapping = parseJsonText(input.mapping, 'object');
  if (mapping.kind === 'invalid') out[SHAPING_FIELDS.mapping] = mapping.message;
  if (input.batching.on)
    for (const bound of ['maxCalls', 'maxBytes'] as const) {
      const parsed = parseCount(input.batching[bound], BATCH_BOUNDS[bound]);
      if (parsed.kind === 'invalid') out[batchingField(bound)] = parsed.message;
    }
  return out;
}

export interface ShapingBody {
  readonly filters?: DestinationFilters | null;
  readonly settings: { readonly mapping?: object | null; readonly batching?: Batching | null };
}

/**
 * For a create: what is set, nothing for what is not. Call only once shapingProblems is empty
 * (text that does not parse is left out rather than sent).
 */
export function shapingCreate(input: ShapingInput): ShapingBody {
  const filters = parseJsonText(input.filters, 'list');
  const mapping = parseJsonText(input.mapping, 'object');
  const batching = batchingValue(input.batching);
  return {
    ...(filters.kind === 'value' ? { filters: filters.value as DestinationFilters } : {}),
    settings: {
      ...(mapping.kind === 'value' ? { mapping: mapping.value as object } : {}),
      ...(batching ? { batching } : {}),
    },
  };
}

/**
 * For a merge patch: as for a create (filters and batching replace what is stored, whole), and
 * null for each part the stored destination had set and the form has emptied, which removes it.
 */
export function shapingPatch(input: ShapingInput, stored: readonly ShapingPart[]): ShapingBody {
  const created = shapingCreate(input);
  const cleared = (part: ShapingPart, given: unknown) => given === undefined && stored.includes(part);
  return {
    ...created,
    ...(cleared('filters', created.filters) ? { filters: null } : {}),
    settings: {
      ...created.settings,
      ...(cleared('mapping', created.settings.mapping) ? { mapping: null } : {}),
      ...(cleared('batching', created.settings.batching) ? { batching: null } : {}),
    },
  };
}

/** The editor a problem's field path belongs to (`filters[0].drop.field.path` → filters), if any. */
export function shapingPartOf(field: string): ShapingPart | undefined {
  return (Object.keys(SHAPING_FIELDS) as ShapingPart[]).find((part) => {
    const at = SHAPING_FIELDS[part];
    return field === at || field.startsWith(`${at}.`) || field.startsWith(`${at}[`);
  });
}

/**
 * The messages for one editor, each naming where inside the JSON it points (`[0].drop.field.path`),
 * rule numbers counted from 1 as the form shows them elsewhere. Batching's bounds have inputs of
 * their own and are left to them.
 */
export function shapingMessage(part: ShapingPart, errors: Readonly<Record<string, string>>): string | undefined {
  const at = SHAPING_FIELDS[part];
  const own = part === 'batching' ? [batchingField('maxCalls'), batchingField('maxBytes')] : [];
  const messages = Object.entries(errors)
    .filter(([field]) => shapingPartOf(field) === part && !own.includes(field))
    .map(([field, message]) => {
      const inner = field.slice(at.length).replace(/^\./, '');
      if (inner === '') return message;
      if (part === 'filters') {
        const rule = /^\[(\d+)\]\.?(.*)$/.exec(inner);
        if (rule) return `rule ${Number(rule[1]) + 1}${rule[2] ? ` (${rule[2]})` : ''}: ${message}`;
      }
      return `${inner}: ${message}`;
    });
  return messages.length > 0 ? messages.join('; ') : undefined;
}
