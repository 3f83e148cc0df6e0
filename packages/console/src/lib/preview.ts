/**
 * The form's preview: a sample call typed as JSON and the destination as the form holds it, sent
 * to POST /destinations/preview (UnsavedPreviewRequest) so it works before a save; and the answer
 * (PreviewResult) said in words.
 */
import type { PreviewResult } from '@eventrelay/config';
import { createBody, localProblems, type DestinationForm } from './destination-form';
import { parseJsonText } from './destination-shaping';

export type { PreviewResult };

/** The sample call's input; the API's problems with the call (`call.type`) show next to it. */
const CALL_FIELD = 'call';

export const SAMPLE_CALL = JSON.stringify(
  { type: 'track', event: 'Order Completed', userId: 'user-1', properties: { total: 30, currency: 'EUR' } },
  null,
  2,
);

export type ParsedCall = { readonly ok: true; readonly call: object } | { readonly ok: false; readonly message: string };

export function parseSampleCall(text: string): ParsedCall {
  const parsed = parseJsonText(text, 'object');
  if (parsed.kind === 'value') return { ok: true, call: parsed.value as object };
  return { ok: false, message: parsed.kind === 'empty' ? 'enter a call as JSON, e.g. {"type": "track", "event": "…"}' : parsed.message };
}

/**
 * The UnsavedPreviewRequest for the form as it stands, or the problems to show first (the form's
 * own checks, and the sample call's). An existing destination is previewed from the form too: its
 * stored secret and header values are write-only, so the preview signs with a secret typed here
 * (none: unsigned) and shows static headers by name only.
 */
export function previewBody(
  form: DestinationForm,
  callText: string,
):
  | { readonly ok: true; readonly body: { call: object; destination: Record<string, unknown> } }
  | { readonly ok: false; readonly problems: Record<string, string> } {
  const problems = localProblems(form);
  const call = parseSampleCall(callText);
  if (!call.ok) problems[CALL_FIELD] = call.message;
  return Object.keys(problems).length > 0 || !call.ok
    ? { ok: false, problems }
    : { ok: true, body: { call: call.call, destination: createBody(form) } };
}

/**
 * The preview's field paths as the form names its inputs: the destination is checked under
 * `destination.` (by the request's schema) or as a create would be (without it).
 */
export function previewFieldPath(field: string): string {
  return field.startsWith('destination.') ? field.slice('destination.'.length) : field;
}

/** "Sent", or which rule refused the call and how; rules counted from 1, as the form's messages do. */
export function decisionText(decision: PreviewResult['decision']): string {
  if (decision.send) return 'Sent';
  const rule = decision.rule === undefined ? 'a rule' : `rule ${decision.rule + 1}`;
  const name = decision.name ? ` (${decision.name})` : '';
  const how = decision.reason ? ` — ${decision.reason}` : '';
  return `Not sent: ${rule}${name}${how}`;
}

/** The body indented for reading, or undefined when it is not JSON (or already reads as it is). */
export function prettyBody(body: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  const pretty = JSON.stringify(value, null, 2);
  return pretty === body ? undefined : pretty;
}

/** Headers in a stable order for reading, static ones (write-only, so their hints) after eventrelay's. */
export function headerLines(request: PreviewResult['requests'][number]): string[] {
  const own = Object.entries(request.headers)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => `${name}: ${value}`);
  const statics = Object.entries(request.staticHeaders ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, hint]) => `${name}: [write-only${hint.last4 ? `, …${hint.last4}` : ''}]`);
  return [...own, ...statics];
}

export const isCallField = (field: string): boolean =>
  field === CALL_FIELD || field.startsWith(`${CALL_FIELD}.`) || field.startsWith(`${CALL_FIELD}[`);

/** Every problem the API found in the sample call (`call`, `call.type` …), for the one input it has. */
export function callMessage(errors: Readonly<Record<string, string>>): string | undefined {
  const messages = Object.entries(errors)
    .filter(([field]) => isCallField(field))
    .map(([field, message]) => (field === CALL_FIELD ? message : `${field.slice(CALL_FIELD.length + 1)}: ${message}`));
  return messages.length > 0 ? messages.join('; ') : undefined;
}
