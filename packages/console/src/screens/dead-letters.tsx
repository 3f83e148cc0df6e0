import type { ReplayProgress } from '@eventrelay/config';
import { useEffect, useState } from 'preact/hooks';
import { encode, type Api } from '../api';
import { Pager, usePages } from '../components/pager';
import { ErrorNote, Field, Json, when } from '../components/ui';
import { useLoad } from '../hooks';
import {
  deadLetterFilterQuery,
  isoToLocalInput,
  localInputToIso,
  pageQuery,
  parseDeadLetterFilter,
  replayFilterBody,
  type DeadLetterFilter,
} from '../lib/filters';
import { href, withQuery } from '../lib/routes';

interface DeadLetter {
  readonly jobId: string;
  readonly job: { readonly sourceId: string; readonly destinationId: string; readonly call: Record<string, unknown> };
  readonly attempts: number;
  readonly lastError: string;
  readonly urls: { url: string; error: string }[];
  readonly firstAttemptAt: string;
  readonly deadAt: string;
}

const PAGE = 100;
const text = (v: unknown, fallback: string) => (typeof v === 'string' ? v : fallback);
const messageIdOf = (l: DeadLetter) => text(l.job.call['messageId'], l.jobId);

export function DeadLetters({ api, id, query }: { api: Api; id: string; query: string }) {
  const filter = parseDeadLetterFilter(query);
  const pages = usePages();
  const cursor = pages.cursor;
  const page = useLoad(
    () =>
      api.get<{ items: DeadLetter[]; nextCursor: string | null }>(
        `/destinations/${encode(id)}/dead-letters?${pageQuery(filter, { limit: PAGE, cursor })}`,
      ),
    `${id}?${query}#${cursor ?? ''}`,
  );
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [replayId, setReplayId] = useState<string | undefined>();
  const [result, setResult] = useState<string | undefined>();
  const [failure, setFailure] = useState<unknown>();
  const [open, setOpen] = useState<string | undefined>();
  const items = page.data?.items ?? [];

  const replay = async (body: unknown, what: string) => {
    setFailure(undefined);
    setResult(undefined);
    try {
      const answer = await api.post<{ replayed: number; replayId?: string }>(`/destinations/${encode(id)}/replay`, body);
      setResult(`Replaying ${answer.replayed} ${what}.`);
      setReplayId(answer.replayId);
      setSelected(new Set());
      page.reload();
    } catch (err) {
      setFailure(err);
    }
  };

  const toggle = (messageId: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(messageId);
    else next.delete(messageId);
    setSelected(next);
  };

  return (
    <>
      <p class="crumbs">
        <a href="#/destinations">Destinations</a> / <a href={href('destinations', id)}>{id}</a> /
      </p>
      <h1>Dead letters</h1>
      <LetterFilters
        key={query}
        filter={filter}
        onApply={(f) => {
          pages.set([]);
          setSelected(new Set());
          setResult(undefined);
          setReplayId(undefined);
          location.hash = withQuery(href('destinations', id, 'dead-letters'), deadLetterFilterQuery(f));
        }}
      />
      <ErrorNote error={page.error} />
      <div class="toolbar">
        <button
          type="button"
          disabled={selected.size === 0}
          onClick={() => void replay({ messageIds: [...selected] }, 'selected dead letters')}
        >
          Replay selected ({selected.size})
        </button>
        <button
          type="button"
          class="secondary"
          disabled={items.length === 0}
          onClick={() =>
            void replay(replayFilterBody(filter), Object.keys(filter).length ? 'dead letters matching the filter' : 'dead letters')
          }
        >
          {Object.keys(filter).length ? 'Replay all matching the filter' : 'Replay all'}
        </button>
      </div>
      <div role="status" aria-live="polite">
        {result && <p>{result}</p>}
      </div>
      <ErrorNote error={failure} />
      {replayId && <Progress key={replayId} api={api} id={id} replayId={replayId} />}
      {!page.loading && items.length === 0 && <p>No dead letters{Object.keys(filter).length ? ' match the filter' : ''}.</p>}
      {items.length > 0 && (
        <table tabIndex={0}>
          <caption class="sr-only">Dead letters, newest first</caption>
          <thead>
            <tr>
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every dead letter on this page"
                  checked={items.length > 0 && items.every((l) => selected.has(messageIdOf(l)))}
                  onChange={(e) => setSelected(e.currentTarget.checked ? new Set(items.map(messageIdOf)) : new Set())}
                />
              </th>
              <th scope="col">Message</th>
              <th scope="col">Last error</th>
              <th scope="col">Attempts</th>
              <th scope="col">Dead since</th>
            </tr>
          </thead>
          <tbody>
            {items.map((l) => {
              const m = messageIdOf(l);
              return (
                <tr key={l.jobId}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select ${m}`}
                      checked={selected.has(m)}
                      onChange={(e) => toggle(m, e.currentTarget.checked)}
                    />
                  </td>
                  <td>
                    <button
                      type="button"
                      class="link"
                      aria-expanded={open === l.jobId}
                      onClick={() => setOpen(open === l.jobId ? undefined : l.jobId)}
                    >
                      {text(l.job.call['type'], 'call')} {text(l.job.call['event'] ?? l.job.call['name'], '')} <code>{m}</code>
                    </button>
                    {open === l.jobId && <Json value={l} label={`Dead letter ${m}`} />}
                  </td>
                  <td>{l.lastError}</td>
                  <td>{l.attempts}</td>
                  <td>{when(l.deadAt)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <Pager pages={pages} nextCursor={page.data?.nextCursor} />
    </>
  );
}

function Progress({ api, id, replayId }: { api: Api; id: string; replayId: string }) {
  const [done, setDone] = useState(false);
  const progress = useLoad(
    () => api.get<ReplayProgress>(`/destinations/${encode(id)}/replays/${encode(replayId)}`),
    replayId,
    done ? undefined : 1_000,
  );
  const p = progress.data;
  useEffect(() => {
    if (p && p.pending === 0) setDone(true);
  }, [p]);
  if (!p) return <ErrorNote error={progress.error} />;
  const finished = p.delivered + p.deadLettered;
  return (
    <div class="progress">
      <label for={`progress-${replayId}`}>Replay progress</label>
      <progress id={`progress-${replayId}`} max={Math.max(1, p.replayed)} value={finished} />
      <p role="status" aria-live="polite">
        {p.delivered} delivered, {p.deadLettered} dead-lettered again, {p.pending} pending of {p.replayed}.
      </p>
    </div>
  );
}

function LetterFilters({ filter, onApply }: { filter: DeadLetterFilter; onApply: (f: DeadLetterFilter) => void }) {
  const [q, setQ] = useState(filter.q ?? '');
  const [since, setSince] = useState(isoToLocalInput(filter.since));
  const [until, setUntil] = useState(isoToLocalInput(filter.until));
  return (
    <form
      class="form inline filters"
      aria-label="Filters"
      onSubmit={(e) => {
        e.preventDefault();
        const s = localInputToIso(since);
        const u = localInputToIso(until, 'end');
        onApply({ ...(q.trim() ? { q: q.trim() } : {}), ...(s ? { since: s } : {}), ...(u ? { until: u } : {}) });
      }}
    >
      <Field label="Search" value={q} onInput={setQ} hint="message id, event or error text" />
      <Field label="Dead since" type="datetime-local" value={since} onInput={setSince} />
      <Field label="Dead until" type="datetime-local" value={until} onInput={setUntil} />
      <button type="submit">Apply filters</button>
    </form>
  );
}
