import { useState } from 'preact/hooks';
import { encode, type Api } from '../api';
import { Pager, usePages } from '../components/pager';
import { ErrorNote, Field, Json, Select, when } from '../components/ui';
import { useLoad } from '../hooks';
import { statusText, type DeliveryAttempt } from '../lib/attempts';
import {
  OUTCOMES,
  STATUS_CLASSES,
  deliveryFilterQuery,
  isoToLocalInput,
  localInputToIso,
  pageQuery,
  parseDeliveryFilter,
  type DeliveryFilter,
  type Outcome,
  type StatusClass,
} from '../lib/filters';
import { href, withQuery } from '../lib/routes';

interface Page {
  readonly items: DeliveryAttempt[];
  readonly nextCursor: string | null;
}

const PAGE = 50;

export function Deliveries({ api, id, query }: { api: Api; id: string; query: string }) {
  const filter = parseDeliveryFilter(query);
  const pages = usePages();
  const cursor = pages.cursor;
  const page = useLoad(
    () => api.get<Page>(`/destinations/${encode(id)}/deliveries?${pageQuery(filter, { limit: PAGE, cursor })}`),
    `${id}?${query}#${cursor ?? ''}`,
  );
  const [open, setOpen] = useState<number | undefined>();
  const apply = (f: DeliveryFilter) => {
    pages.set([]);
    location.hash = withQuery(href('destinations', id, 'deliveries'), deliveryFilterQuery(f));
  };

  return (
    <>
      <p class="crumbs">
        <a href="#/destinations">Destinations</a> / <a href={href('destinations', id)}>{id}</a> /
      </p>
      <h1>Delivery log</h1>
      <DeliveryFilters key={query} filter={filter} onApply={apply} />
      <ErrorNote error={page.error} />
      <p class="muted" role="status" aria-live="polite">
        {page.loading ? 'Loading…' : `${page.data?.items.length ?? 0} attempts on this page, newest first.`}
      </p>
      <ol class="events">
        {page.data?.items.map((a, i) => (
          <li key={`${a.messageId}-${a.url}-${a.attempt}-${a.at}`}>
            <button type="button" class="row" aria-expanded={open === i} onClick={() => setOpen(open === i ? undefined : i)}>
              <span class={`badge ${a.outcome === 'success' ? 'on' : 'bad'}`}>{a.outcome}</span> {statusText(a)} · {Math.round(a.latencyMs)}{' '}
              ms · <code>{a.messageId}</code> · attempt {a.attempt} · {a.url}{' '}
              <time class="muted" dateTime={a.at}>
                {when(a.at)}
              </time>
            </button>
            {open === i && <AttemptDetail a={a} />}
          </li>
        ))}
      </ol>
      <Pager pages={pages} nextCursor={page.data?.nextCursor} />
    </>
  );
}

function AttemptDetail({ a }: { a: DeliveryAttempt }) {
  return (
    <div class="detail">
      {a.error && <p>Error: {a.error}</p>}
      <h3>Request</h3>
      <Exchange part={a.request} name="Request" missing="Not recorded for this attempt." />
      <h3>Answer</h3>
      <Exchange part={a.response} name="Response" missing="No answer recorded." />
    </div>
  );
}

function DeliveryFilters({ filter, onApply }: { filter: DeliveryFilter; onApply: (f: DeliveryFilter) => void }) {
  const [status, setStatus] = useState<Outcome | ''>(filter.status ?? '');
  const [statusClass, setStatusClass] = useState<StatusClass | ''>(filter.statusClass ?? '');
  const [messageId, setMessageId] = useState(filter.messageId ?? '');
  const [since, setSince] = useState(isoToLocalInput(filter.since));
  const [until, setUntil] = useState(isoToLocalInput(filter.until));
  const submit = (e: Event) => {
    e.preventDefault();
    onApply({
      ...(status ? { status } : {}),
      ...(statusClass ? { statusClass } : {}),
      ...(messageId.trim() ? { messageId: messageId.trim() } : {}),
      ...(localInputToIso(since) ? { since: localInputToIso(since)! } : {}),
      ...(localInputToIso(until, 'end') ? { until: localInputToIso(until, 'end')! } : {}),
    });
  };
  return (
    <form class="form inline filters" onSubmit={submit} aria-label="Filters">
      <Select
        label="Outcome"
        value={status}
        options={[{ value: '', label: 'any' }, ...OUTCOMES.map((o) => ({ value: o, label: o }))]}
        onChange={setStatus}
      />
      <Select
        label="Status class"
        value={statusClass}
        options={[{ value: '', label: 'any' }, ...STATUS_CLASSES.map((o) => ({ value: o, label: o === 'none' ? 'no answer' : o }))]}
        onChange={setStatusClass}
      />
      <Field label="Message id" value={messageId} onInput={setMessageId} />
      <Field label="From" type="datetime-local" value={since} onInput={setSince} />
      <Field label="Until" type="datetime-local" value={until} onInput={setUntil} />
      <button type="submit">Apply filters</button>
    </form>
  );
}

/** One side of an attempt as the log keeps it: headers, then the body excerpt. */
function Exchange({
  part,
  name,
  missing,
}: {
  part: DeliveryAttempt['request'] | DeliveryAttempt['response'];
  name: string;
  missing: string;
}) {
  if (!part) return <p class="muted">{missing}</p>;
  return (
    <>
      <Json value={part.headers} label={`${name} headers`} />
      <pre class="json" aria-label={`${name} body`} tabIndex={0}>
        {part.body}
        {part.bodyTruncated ? '\n… (truncated)' : ''}
      </pre>
    </>
  );
}
