/**
 * Filters of the delivery log and the dead letters, kept in the page's hash query so a filtered
 * view can be bookmarked and shared, and turned into the admin API's query parameters.
 */
export const OUTCOMES = ['success', 'failed', 'retryable', 'permanent'] as const;
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx', 'none'] as const;

export type Outcome = (typeof OUTCOMES)[number];
export type StatusClass = (typeof STATUS_CLASSES)[number];

export interface DeliveryFilter {
  readonly status?: Outcome;
  readonly statusClass?: StatusClass;
  readonly messageId?: string;
  /** ISO 8601 */
  readonly since?: string;
  readonly until?: string;
}

export interface DeadLetterFilter {
  /** Text the letter's message id, event or error holds. */
  readonly q?: string;
  readonly since?: string;
  readonly until?: string;
}

const oneOf = <T extends string>(values: readonly T[], v: string | null): T | undefined =>
  v !== null && (values as readonly string[]).includes(v) ? (v as T) : undefined;

const trimmed = (v: string | null): string | undefined => {
  const t = v?.trim();
  return t ? t : undefined;
};

/** An ISO time, or undefined for anything Date cannot read (a hand-edited URL). */
const isoTime = (v: string | null): string | undefined => {
  const t = trimmed(v);
  if (!t) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
};

function compact(entries: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(entries)) if (v !== undefined && v !== '') out[k] = v;
  return out;
}

export function parseDeliveryFilter(query: string): DeliveryFilter {
  const p = new URLSearchParams(query);
  return compactFilter({
    status: oneOf(OUTCOMES, p.get('status')),
    statusClass: oneOf(STATUS_CLASSES, p.get('statusClass')),
    messageId: trimmed(p.get('messageId')),
    since: isoTime(p.get('since')),
    until: isoTime(p.get('until')),
  });
}

export function deliveryFilterQuery(filter: DeliveryFilter): string {
  return new URLSearchParams(compact({ ...filter })).toString();
}

export function parseDeadLetterFilter(query: string): DeadLetterFilter {
  const p = new URLSearchParams(query);
  return compactFilter({ q: trimmed(p.get('q')), since: isoTime(p.get('since')), until: isoTime(p.get('until')) });
}

export function deadLetterFilterQuery(filter: DeadLetterFilter): string {
  return new URLSearchParams(compact({ ...filter })).toString();
}

/** The API page query: the filter plus paging. */
export function pageQuery(filter: DeliveryFilter | DeadLetterFilter, page: { limit: number; cursor?: string | undefined }): string {
  return new URLSearchParams(compact({ ...filter, limit: String(page.limit), cursor: page.cursor })).toString();
}

function compactFilter<T extends object>(filter: T): T {
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)) as T;
}

/**
 * A datetime-local input's value (local time, no zone) as ISO UTC, and back, so the inputs show
 * the user's own clock while the URL and the API carry UTC. The API's bounds are inclusive, so an
 * `end` bound is the last millisecond of the second (or minute) shown: "until 09:05" takes what
 * happened during 09:05.
 */
export function localInputToIso(value: string, bound: 'start' | 'end' = 'start'): string | undefined {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  if (Number.isNaN(ms)) return undefined;
  const withSeconds = /T\d{2}:\d{2}:\d{2}/.test(value);
  return new Date(bound === 'end' ? ms + (withSeconds ? 999 : 59_999) : ms).toISOString();
}

export function isoToLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The replay request for "every letter matching this filter" (the API takes the same fields). */
export function replayFilterBody(filter: DeadLetterFilter): { filter: DeadLetterFilter } | { all: true } {
  const f = compactFilter({ ...filter });
  return Object.keys(f).length === 0 ? { all: true } : { filter: f };
}
