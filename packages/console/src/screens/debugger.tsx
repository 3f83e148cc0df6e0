import { useRef, useState } from 'preact/hooks';
import { encode, type Api } from '../api';
import { ErrorNote, Json, when } from '../components/ui';
import { useLoad } from '../hooks';
import { href } from '../lib/routes';

interface DebugEvent {
  readonly at: string;
  readonly outcome: 'accepted' | 'rejected';
  readonly code?: string;
  readonly message?: string;
  readonly call?: Record<string, unknown>;
}

const POLL_MS = 1_000;

function describe(e: DebugEvent): string {
  const call = e.call ?? {};
  const type = typeof call['type'] === 'string' ? call['type'] : 'call';
  const name = ['event', 'name', 'userId', 'anonymousId'].map((k) => call[k]).find((v) => typeof v === 'string');
  return name ? `${type} ${String(name)}` : String(type);
}

/** The latest calls of a source, newest first, refreshed every second until paused. */
export function Debugger({ api, id }: { api: Api; id: string }) {
  const [paused, setPaused] = useState(false);
  const [open, setOpen] = useState<number | undefined>();
  const frozen = useRef<DebugEvent[] | undefined>(undefined);
  const page = useLoad(() => api.get<{ items: DebugEvent[] }>(`/sources/${encode(id)}/events?limit=100`), id, paused ? undefined : POLL_MS);
  const live = page.data?.items;
  if (!paused) frozen.current = live;
  const items = (paused ? frozen.current : live) ?? [];
  const accepted = items.filter((e) => e.outcome === 'accepted').length;

  return (
    <>
      <p class="crumbs">
        <a href="#/sources">Sources</a> / <a href={href('sources', id)}>{id}</a> /
      </p>
      <h1>Live events</h1>
      <div class="toolbar">
        <button type="button" aria-pressed={paused} onClick={() => setPaused(!paused)}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <span class="muted" role="status" aria-live="polite">
          {paused ? 'Paused.' : 'Live, every second.'} {items.length} calls: {accepted} accepted, {items.length - accepted} rejected.
        </span>
      </div>
      <ErrorNote error={page.error} />
      {items.length === 0 && !page.loading && <p>No calls yet. Send one with the snippet on the source's page.</p>}
      <ol class="events" aria-label="Calls, newest first">
        {items.map((e, i) => (
          <li key={`${e.at}-${i}`} class={e.outcome}>
            <button type="button" class="row" aria-expanded={open === i} onClick={() => setOpen(open === i ? undefined : i)}>
              <span class={`badge ${e.outcome === 'accepted' ? 'on' : 'bad'}`}>{e.outcome}</span> <span>{describe(e)}</span>{' '}
              <time class="muted" dateTime={e.at}>
                {when(e.at)}
              </time>
              {e.outcome === 'rejected' && (
                <span class="reason">
                  {' '}
                  {e.code}: {e.message}
                </span>
              )}
            </button>
            {open === i && <Json value={e} label="The call as JSON" />}
          </li>
        ))}
      </ol>
    </>
  );
}
