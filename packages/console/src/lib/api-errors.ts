/**
 * The admin API's error answer (`{success: false, code, message, fields?}`) turned into what a form
 * shows: one message per input, keyed by the field path the API names (`settings.webhooks[1].url`).
 */
export interface FieldProblem {
  readonly field: string;
  readonly message: string;
}

export interface ApiProblem {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly fields: readonly FieldProblem[];
}

/** Reads an error body defensively: a proxy in front of the admin API may answer with anything. */
export function toApiProblem(status: number, body: unknown): ApiProblem {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const fields = Array.isArray(b['fields'])
    ? (b['fields'] as unknown[]).filter(
        (f): f is FieldProblem =>
          typeof f === 'object' &&
          f !== null &&
          typeof (f as FieldProblem).field === 'string' &&
          typeof (f as FieldProblem).message === 'string',
      )
    : [];
  return {
    status,
    code: typeof b['code'] === 'string' ? b['code'] : `http_${status}`,
    message: typeof b['message'] === 'string' ? b['message'] : `the server answered ${status}`,
    fields,
  };
}

/**
 * Field path → message. Paths are normalised to the form the inputs use (`a.b[0].c`): the
 * validator may report `/settings/webhooks/1/url` or `settings.webhooks.1.url`.
 */
export function fieldMessages(fields: readonly FieldProblem[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields) {
    const key = normaliseFieldPath(f.field);
    // The first problem of a field is the one to fix first; later ones often follow from it.
    if (!(key in out)) out[key] = f.message;
  }
  return out;
}

export function normaliseFieldPath(field: string): string {
  const parts = field
    .replace(/\[(\d+)\]/g, '.$1')
    .split(/[./]/)
    .filter((p) => p !== '');
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/**
 * Problems no input on the form claims, shown together above the form so none is lost.
 */
export function unclaimed(messages: Record<string, string>, shown: readonly string[]): string[] {
  return Object.entries(messages)
    .filter(([field]) => !shown.includes(field))
    .map(([field, message]) => (field === '' ? message : `${field}: ${message}`));
}

/** What sign-in says after a 401: the token was refused, or it stopped working while in use. */
export function unauthorizedMessage(whileSignedIn: boolean): string {
  return whileSignedIn
    ? 'Your session ended: the admin API refused the token. Sign in again.'
    : 'That token was refused by the admin API. Check it and try again.';
}
