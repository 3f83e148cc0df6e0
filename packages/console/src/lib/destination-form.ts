/**
 * The destination setup form's state (catalog entry → sources → up to five URLs with static
 * headers → shared secret → delivery settings → enable) and the API bodies it becomes. Header
 * values already stored are write-only: the API shows a hint, and sending the hint back keeps the
 * stored value. Also the bodies of the destination screen's other writes: re-enabling a URL and
 * rotating the shared secret.
 */
import type { DestinationView, SecretHint, SecretRotation, SecretRotated } from '@eventrelay/config';
// The bounds come from the contract itself, so the form cannot drift from what the API accepts.
import settingsSchema from '@eventrelay/config/schemas/webhook-settings.schema.json';
import {
  emptyShaping,
  shapingCreate,
  shapingFromView,
  shapingPatch,
  shapingProblems,
  type ShapingInput,
  type ShapingPart,
} from './destination-shaping';

export const MAX_WEBHOOKS = 5;

interface HeaderRow {
  readonly name: string;
  readonly value: string;
  /** The stored value's hint, while the user has not typed a new value. */
  readonly hint?: SecretHint;
}

export interface WebhookRow {
  readonly url: string;
  readonly headers: readonly HeaderRow[];
}

/** The delivery settings a destination may set; each one left unset takes the service's default. */
export const DELIVERY_SETTINGS = [
  'timeoutMs',
  'retryWindowMs',
  'maxConcurrentRequests',
  'maxRequestsPerSecond',
  'autoDisableAfterMs',
] as const;
export type DeliverySetting = (typeof DELIVERY_SETTINGS)[number];

export type SettingUnit = 'count' | 'seconds' | 'minutes' | 'hours';
const UNIT_SCALE: Record<SettingUnit, number> = { count: 1, seconds: 1_000, minutes: 60_000, hours: 3_600_000 };
const UNIT_NAMES: Record<SettingUnit, readonly [string, string]> = {
  count: ['', ''],
  seconds: ['second', 'seconds'],
  minutes: ['minute', 'minutes'],
  hours: ['hour', 'hours'],
};

interface SettingSpec {
  readonly label: string;
  /** The units the field may be typed in, the largest first; the first is a new form's. */
  readonly units: readonly SettingUnit[];
  /** What an empty field means: the deployment's default, from the delivery service's env. */
  readonly fallback: string;
}

export const SETTING_SPECS: Record<DeliverySetting, SettingSpec> = {
  timeoutMs: { label: 'Request timeout (seconds)', units: ['seconds'], fallback: 'DELIVERY_TIMEOUT_MS, 5 seconds unless set' },
  retryWindowMs: { label: 'Retry window', units: ['hours', 'minutes'], fallback: 'RETRY_WINDOW_MS, 4 hours unless set' },
  maxConcurrentRequests: {
    label: 'Max concurrent requests',
    units: ['count'],
    fallback: 'DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION, 64 per delivery process unless set',
  },
  maxRequestsPerSecond: { label: 'Max requests per second', units: ['count'], fallback: 'no limit' },
  autoDisableAfterMs: { label: 'Auto-disable after', units: ['hours', 'minutes'], fallback: 'never' },
};

/** A setting as typed: empty text means the default. */
export interface SettingInput {
  readonly text: string;
  readonly unit: SettingUnit;
}

export interface DestinationForm {
  readonly catalogName: string;
  readonly sourceIds: readonly string[];
  readonly webhooks: readonly WebhookRow[];
  readonly sharedSecret: string;
  readonly enabled: boolean;
  readonly delivery: Readonly<Record<DeliverySetting, SettingInput>>;
  readonly standardWebhooks: boolean;
  /** Filters, mapping and batching: what is sent, and how many calls a request carries. */
  readonly shaping: ShapingInput;
  /**
   * What the stored destination had set when it was read (absent for a new one): an emptied field
   * is sent as null, back to the default, only for a setting that was set.
   */
  readonly stored?: {
    readonly settings: readonly (DeliverySetting | 'standardWebhooks')[];
    readonly secretSet: boolean;
    readonly shaping: readonly ShapingPart[];
  };
}

export type { DestinationView, SecretRotated };

export const emptyWebhook = (): WebhookRow => ({ url: '', headers: [] });

const emptyDelivery = (): Record<DeliverySetting, SettingInput> =>
  Object.fromEntries(DELIVERY_SETTINGS.map((name) => [name, { text: '', unit: SETTING_SPECS[name].units[0]! }])) as Record<
    DeliverySetting,
    SettingInput
  >;

export function emptyForm(catalogName = 'Webhooks'): DestinationForm {
  return {
    catalogName,
    sourceIds: [],
    webhooks: [emptyWebhook()],
    sharedSecret: '',
    enabled: false,
    delivery: emptyDelivery(),
    standardWebhooks: false,
    shaping: emptyShaping(),
  };
}

/** A stored value in the largest of the setting's units that shows it whole (90 minutes, not 1.5 hours). */
function settingInput(name: DeliverySetting, value: number | undefined): SettingInput {
  const { units } = SETTING_SPECS[name];
  if (value === undefined) return { text: '', unit: units[0]! };
  const unit = units.find((u) => value % UNIT_SCALE[u] === 0) ?? units[units.length - 1]!;
  return { text: String(value / UNIT_SCALE[unit]), unit };
}

export function formFromView(view: DestinationView): DestinationForm {
  const settings = view.settings;
  const shaping = shapingFromView(view);
  return {
    catalogName: view.name,
    sourceIds: [...view.sourceIds],
    webhooks: settings.webhooks.map((w) => ({
      url: w.url,
      headers: Object.entries(w.headers ?? {}).map(([name, hint]) => ({ name, value: '', hint })),
    })),
    sharedSecret: '',
    enabled: view.enabled,
    delivery: Object.fromEntries(DELIVERY_SETTINGS.map((name) => [name, settingInput(name, settings[name])])) as Record<
      DeliverySetting,
      SettingInput
    >,
    standardWebhooks: settings.standardWebhooks === true,
    shaping: shaping.input,
    stored: {
      settings: [...DELIVERY_SETTINGS, 'standardWebhooks' as const].filter((name) => settings[name] !== undefined),
      secretSet: settings.sharedSecret.set,
      shaping: shaping.stored,
    },
  };
}

type Parsed =
  | { readonly kind: 'default' }
  | { readonly kind: 'value'; readonly value: number }
  | { readonly kind: 'invalid'; readonly message: string };

function bound(value: number, unit: SettingUnit): string {
  if (unit === 'count') return String(value);
  // A bound that is not whole in the field's unit (1 minute in hours) is said in the largest unit that is.
  const shown =
    value % UNIT_SCALE[unit] === 0 ? unit : (['hours', 'minutes', 'seconds'] as const).find((u) => value % UNIT_SCALE[u] === 0)!;
  const n = value / UNIT_SCALE[shown];
  return `${n} ${UNIT_NAMES[shown][n === 1 ? 0 : 1]}`;
}

/** A field's text as the value the API takes (whole milliseconds or a count), checked against the schema's bounds. */
export function parseSetting(name: DeliverySetting, input: SettingInput): Parsed {
  const text = input.text.trim();
  if (text === '') return { kind: 'default' };
  const { minimum, maximum } = settingsSchema.properties[name];
  const range = `enter a number between ${bound(minimum, input.unit)} and ${bound(maximum, input.unit)}`;
  const n = Number(text);
  if (!Number.isFinite(n)) return { kind: 'invalid', message: range };
  if (input.unit === 'count' && !Number.isInteger(n)) return { kind: 'invalid', message: 'enter a whole number' };
  const value = Math.round(n * UNIT_SCALE[input.unit]);
  return value < minimum || value > maximum ? { kind: 'invalid', message: range } : { kind: 'value', value };
}

/** The settings typed, for a create body: an empty field is left out, so the default applies. */
function deliveryCreate(form: DestinationForm): Record<string, number | boolean> {
  const out: Record<string, number | boolean> = {};
  for (const name of DELIVERY_SETTINGS) {
    const parsed = parseSetting(name, form.delivery[name]);
    if (parsed.kind === 'value') out[name] = parsed.value;
  }
  if (form.standardWebhooks) out['standardWebhooks'] = true;
  return out;
}

/** The same for a merge patch: an emptied field that was set goes back to the default as null. */
function deliveryPatch(form: DestinationForm): Record<string, number | boolean | null> {
  const out: Record<string, number | boolean | null> = deliveryCreate(form);
  const stored = form.stored?.settings ?? [];
  for (const name of DELIVERY_SETTINGS)
    if (parseSetting(name, form.delivery[name]).kind === 'default' && stored.includes(name)) out[name] = null;
  if (!form.standardWebhooks && stored.includes('standardWebhooks')) out['standardWebhooks'] = null;
  return out;
}

function headersBody(rows: readonly HeaderRow[], keepHints: boolean): Record<string, string | SecretHint> | undefined {
  const named = rows.filter((h) => h.name.trim() !== '');
  if (named.length === 0) return undefined;
  return Object.fromEntries(named.map((h) => [h.name.trim(), keepHints && h.value === '' && h.hint ? h.hint : h.value]));
}

export function createBody(form: DestinationForm): Record<string, unknown> {
  const secret = form.sharedSecret.trim();
  const shaping = shapingCreate(form.shaping);
  return {
    name: form.catalogName,
    enabled: form.enabled,
    sourceIds: [...form.sourceIds],
    settings: {
      webhooks: form.webhooks.map((w) => {
        const headers = headersBody(w.headers, false);
        return headers ? { url: w.url.trim(), headers } : { url: w.url.trim() };
      }),
      ...(secret ? { sharedSecret: secret } : {}),
      ...deliveryCreate(form),
      ...shaping.settings,
    },
    ...(shaping.filters ? { filters: shaping.filters } : {}),
  };
}

/**
 * A merge patch of everything the form holds; the secret only when a new one was typed. A URL is
 * sent without `disabled`, which keeps the state stored for it: only re-enabling changes that.
 */
export function patchBody(form: DestinationForm): Record<string, unknown> {
  const secret = form.sharedSecret.trim();
  const shaping = shapingPatch(form.shaping, form.stored?.shaping ?? []);
  return {
    sourceIds: [...form.sourceIds],
    settings: {
      webhooks: form.webhooks.map((w) => {
        const headers = headersBody(w.headers, true);
        return headers ? { url: w.url.trim(), headers } : { url: w.url.trim() };
      }),
      ...(secret ? { sharedSecret: secret } : {}),
      ...deliveryPatch(form),
      ...shaping.settings,
    },
    ...(shaping.filters !== undefined ? { filters: shaping.filters } : {}),
  };
}

/**
 * Re-enables one URL eventrelay disabled (it answered 410 Gone): the whole list as read, header
 * hints keeping the stored values, with `disabled: false` on that URL only; the others, sent
 * without it, keep their state.
 */
export function reenableBody(view: DestinationView, url: string): Record<string, unknown> {
  return {
    settings: {
      webhooks: view.settings.webhooks.map((w) => ({
        url: w.url,
        ...(w.headers && Object.keys(w.headers).length > 0 ? { headers: { ...w.headers } } : {}),
        ...(w.url === url ? { disabled: false } : {}),
      })),
    },
  };
}

/** The field path the API uses for an input, so its message shows next to it. */
export const webhookUrlField = (i: number) => `settings.webhooks[${i}].url`;
export const headerField = (i: number, name: string) => `settings.webhooks[${i}].headers.${name.trim()}`;
export const settingField = (name: DeliverySetting | 'standardWebhooks') => `settings.${name}`;

/**
 * Checks the browser can make before a round trip; the API stays the judge (its messages use the
 * same field paths and replace these).
 */
export function localProblems(form: DestinationForm): Record<string, string> {
  const out: Record<string, string> = {};
  if (form.webhooks.length === 0) out['settings.webhooks'] = 'add at least one URL';
  if (form.webhooks.length > MAX_WEBHOOKS) out['settings.webhooks'] = `at most ${MAX_WEBHOOKS} URLs`;
  const urls = form.webhooks.map((w) => w.url.trim());
  form.webhooks.forEach((w, i) => {
    if (w.url.trim() === '') out[webhookUrlField(i)] = 'enter the URL to deliver to';
    else if (urls.indexOf(urls[i]!) !== i) out[webhookUrlField(i)] = `this URL is also URL ${urls.indexOf(urls[i]!) + 1}`;
    const names = w.headers.map((h) => h.name.trim().toLowerCase()).filter((n) => n !== '');
    w.headers.forEach((h, j) => {
      const n = h.name.trim();
      if (n === '' && h.value !== '') out[`settings.webhooks[${i}].headers[${j}]`] = 'give the header a name';
      else if (n !== '' && names.indexOf(n.toLowerCase()) !== names.lastIndexOf(n.toLowerCase()))
        out[headerField(i, n)] = 'this header is given twice';
    });
  });
  for (const name of DELIVERY_SETTINGS) {
    const parsed = parseSetting(name, form.delivery[name]);
    if (parsed.kind === 'invalid') out[settingField(name)] = parsed.message;
  }
  if (form.standardWebhooks && form.sharedSecret.trim() === '' && !form.stored?.secretSet)
    out[settingField('standardWebhooks')] = 'needs a shared secret to sign with: set one below';
  return { ...out, ...shapingProblems(form.shaping) };
}

/** How long the current secret keeps signing next to the new one after a rotation. */
export const OVERLAPS = [
  { id: '24h', label: '24 hours (default)', ms: 86_400_000 },
  { id: '1h', label: '1 hour', ms: 3_600_000 },
  { id: '7d', label: '7 days', ms: 604_800_000 },
  { id: 'none', label: 'none (replace it at once)', ms: 0 },
] as const;
export type Overlap = (typeof OVERLAPS)[number]['id'];

export interface RotationForm {
  /** Empty: the API generates one (`whsec_…`). */
  readonly secret: string;
  readonly overlap: Overlap;
}

export const emptyRotation = (): RotationForm => ({ secret: '', overlap: '24h' });

/** SecretRotation.secret's minLength in admin-api.schema.json (a test keeps them equal). */
export const ROTATION_SECRET_MIN = 16;

export function rotationBody(form: RotationForm): SecretRotation {
  const secret = form.secret.trim();
  const overlapMs = OVERLAPS.find((o) => o.id === form.overlap)!.ms;
  return secret ? { secret, overlapMs } : { overlapMs };
}

export function rotationProblems(form: RotationForm): Record<string, string> {
  const secret = form.secret.trim();
  return secret !== '' && secret.length < ROTATION_SECRET_MIN
    ? { secret: `at least ${ROTATION_SECRET_MIN} characters, or leave empty to have one generated` }
    : {};
}
