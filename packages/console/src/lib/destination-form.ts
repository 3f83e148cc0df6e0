/**
 * The destination setup form's state (catalog entry → sources → up to five URLs with static
 * headers → shared secret → enable) and the API bodies it becomes. Header values already stored
 * are write-only: the API shows a hint, and sending the hint back keeps the stored value.
 */
import type { DestinationView, SecretHint } from '@eventrelay/config';

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

export interface DestinationForm {
  readonly catalogName: string;
  readonly sourceIds: readonly string[];
  readonly webhooks: readonly WebhookRow[];
  readonly sharedSecret: string;
  readonly enabled: boolean;
}

export type { DestinationView };

export const emptyWebhook = (): WebhookRow => ({ url: '', headers: [] });

export function emptyForm(catalogName = 'Webhooks'): DestinationForm {
  return { catalogName, sourceIds: [], webhooks: [emptyWebhook()], sharedSecret: '', enabled: false };
}

export function formFromView(view: DestinationView): DestinationForm {
  return {
    catalogName: view.name,
    sourceIds: [...view.sourceIds],
    webhooks: view.settings.webhooks.map((w) => ({
      url: w.url,
      headers: Object.entries(w.headers ?? {}).map(([name, hint]) => ({ name, value: '', hint })),
    })),
    sharedSecret: '',
    enabled: view.enabled,
  };
}

function headersBody(rows: readonly HeaderRow[], keepHints: boolean): Record<string, string | SecretHint> | undefined {
  const named = rows.filter((h) => h.name.trim() !== '');
  if (named.length === 0) return undefined;
  return Object.fromEntries(named.map((h) => [h.name.trim(), keepHints && h.value === '' && h.hint ? h.hint : h.value]));
}

export function createBody(form: DestinationForm): Record<string, unknown> {
  const secret = form.sharedSecret.trim();
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
    },
  };
}

/** A merge patch of everything the form holds; the secret only when a new one was typed. */
export function patchBody(form: DestinationForm): Record<string, unknown> {
  const secret = form.sharedSecret.trim();
  return {
    sourceIds: [...form.sourceIds],
    settings: {
      webhooks: form.webhooks.map((w) => {
        const headers = headersBody(w.headers, true);
        return headers ? { url: w.url.trim(), headers } : { url: w.url.trim() };
      }),
      ...(secret ? { sharedSecret: secret } : {}),
    },
  };
}

/** The field path the API uses for an input, so its message shows next to it. */
export const webhookUrlField = (i: number) => `settings.webhooks[${i}].url`;
export const headerField = (i: number, name: string) => `settings.webhooks[${i}].headers.${name.trim()}`;

/**
 * Checks the browser can make before a round trip; the API stays the judge (its messages use the
 * same field paths and replace these).
 */
export function localProblems(form: DestinationForm): Record<string, string> {
  const out: Record<string, string> = {};
  if (form.webhooks.length === 0) out['settings.webhooks'] = 'add at least one URL';
  if (form.webhooks.length > MAX_WEBHOOKS) out['settings.webhooks'] = `at most ${MAX_WEBHOOKS} URLs`;
  form.webhooks.forEach((w, i) => {
    if (w.url.trim() === '') out[webhookUrlField(i)] = 'enter the URL to deliver to';
    const names = w.headers.map((h) => h.name.trim().toLowerCase()).filter((n) => n !== '');
    w.headers.forEach((h, j) => {
      const n = h.name.trim();
      if (n === '' && h.value !== '') out[`settings.webhooks[${i}].headers[${j}]`] = 'give the header a name';
      else if (n !== '' && names.indexOf(n.toLowerCase()) !== names.lastIndexOf(n.toLowerCase()))
        out[headerField(i, n)] = 'this header is given twice';
    });
  });
  return out;
}
