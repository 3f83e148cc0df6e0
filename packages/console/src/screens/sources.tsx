import type { ConsoleInfo, Source } from '@eventrelay/config';
import { useState } from 'preact/hooks';
import { ApiError, encode, type Api } from '../api';
import { CopyButton, ErrorNote, Field, Select, Status } from '../components/ui';
import { useLoad } from '../hooks';
import { fieldMessages, unclaimed } from '../lib/api-errors';
import { href } from '../lib/routes';
import { SNIPPET_LABELS, snippet, type SnippetKind } from '../lib/snippets';

export type { Source };

export type Info = ConsoleInfo;

const TYPES = [
  { value: 'server', label: 'Server' },
  { value: 'web', label: 'Web' },
  { value: 'mobile', label: 'Mobile' },
] as const;

/** The new write key, shown once after create or rotate: the list never shows keys. */
function NewKey({ source, verb }: { source: Source; verb: string }) {
  return (
    <div class="notice" role="status" aria-live="polite">
      <p>
        {verb} <strong>{source.name}</strong>. Its write key is shown once here; copy it now:
      </p>
      <p>
        <code class="key" aria-label="Write key">
          {source.writeKey}
        </code>{' '}
        <CopyButton text={source.writeKey} label="Copy write key" />
      </p>
    </div>
  );
}

export function Sources({ api }: { api: Api }) {
  const list = useLoad(() => api.get<Source[]>('/sources'), 'sources');
  const [name, setName] = useState('');
  const [type, setType] = useState<Source['type'] | ''>('server');
  const [rate, setRate] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>();
  const [created, setCreated] = useState<Source | undefined>();

  const create = async (e: Event) => {
    e.preventDefault();
    setErrors({});
    setFailure(undefined);
    try {
      const body = { name: name.trim(), type: type || 'server', ...(rate.trim() ? { rateLimitPerSecond: Number(rate) } : {}) };
      const source = await api.post<Source>('/sources', body);
      setCreated(source);
      setName('');
      setRate('');
      list.reload();
    } catch (err) {
      if (err instanceof ApiError && err.problem.fields.length > 0) setErrors(fieldMessages(err.problem.fields));
      else setFailure(err);
    }
  };

  return (
    <>
      <h1>Sources</h1>
      <ErrorNote error={list.error} />
      {list.data && (
        <table>
          <caption class="sr-only">Sources</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Type</th>
              <th scope="col">Rate limit</th>
              <th scope="col">Debugger</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((s) => (
              <tr key={s.id}>
                <td>
                  <a href={href('sources', s.id)}>{s.name}</a>
                </td>
                <td>
                  <code>{s.id}</code>
                </td>
                <td>{s.type}</td>
                <td>{s.rateLimitPerSecond ? `${s.rateLimitPerSecond}/s` : 'default'}</td>
                <td>
                  <a href={href('sources', s.id, 'debugger')} aria-label={`Live debugger of ${s.name}`}>
                    Live debugger
                  </a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data?.length === 0 && <p>No sources yet: create the first below.</p>}
      {created && <NewKey source={created} verb="Created" />}
      <section aria-labelledby="new-source">
        <h2 id="new-source">New source</h2>
        <form onSubmit={(e) => void create(e)} class="form">
          <Field label="Name" value={name} onInput={setName} error={errors['name']} required />
          <Select label="Type" value={type} options={TYPES} onChange={setType} />
          <Field
            label="Rate limit (calls per second)"
            type="number"
            value={rate}
            onInput={setRate}
            error={errors['rateLimitPerSecond']}
            hint="Leave empty for the intake's default."
          />
          {unclaimed(errors, ['name', 'rateLimitPerSecond']).map((m) => (
            <p key={m} class="error" role="alert">
              {m}
            </p>
          ))}
          <ErrorNote error={failure} />
          <button type="submit">Create source</button>
        </form>
      </section>
    </>
  );
}

export function SourceDetail({ api, id }: { api: Api; id: string }) {
  const source = useLoad(() => api.get<Source>(`/sources/${encode(id)}`), id);
  const info = useLoad(() => api.get<Info>('/info'), 'info');
  const [rotated, setRotated] = useState<Source | undefined>();
  const [failure, setFailure] = useState<unknown>();
  const s = rotated ?? source.data;

  const rotate = async () => {
    if (!confirm('Rotate the write key? The current key stops working within 2 seconds.')) return;
    setFailure(undefined);
    try {
      setRotated(await api.post<Source>(`/sources/${encode(id)}/rotate-write-key`));
    } catch (err) {
      setFailure(err);
    }
  };

  return (
    <>
      <p class="crumbs">
        <a href="#/sources">Sources</a> /
      </p>
      <h1>{s ? s.name : id}</h1>
      <ErrorNote error={source.error} />
      {s && (
        <>
          <p>
            <code>{s.id}</code> · {s.type} · <a href={href('sources', s.id, 'debugger')}>Live event debugger</a>
          </p>
          <EditSource api={api} source={s} onSaved={source.reload} />
          <section aria-labelledby="rotate-heading">
            <h2 id="rotate-heading">Write key</h2>
            {rotated && <NewKey source={rotated} verb="Rotated the write key of" />}
            <button type="button" class="danger" onClick={() => void rotate()}>
              Rotate write key
            </button>
            <ErrorNote error={failure} />
          </section>
          <Snippets source={s} info={info.data} infoError={info.error} />
        </>
      )}
    </>
  );
}

function EditSource({ api, source, onSaved }: { api: Api; source: Source; onSaved: () => void }) {
  const [name, setName] = useState(source.name);
  const [rate, setRate] = useState(source.rateLimitPerSecond ? String(source.rateLimitPerSecond) : '');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [result, setResult] = useState<string | undefined>();

  const save = async (e: Event) => {
    e.preventDefault();
    setErrors({});
    setResult(undefined);
    try {
      await api.patch(`/sources/${encode(source.id)}`, { name: name.trim(), rateLimitPerSecond: rate.trim() ? Number(rate) : null });
      setResult('Saved.');
      onSaved();
    } catch (err) {
      if (err instanceof ApiError && err.problem.fields.length > 0) setErrors(fieldMessages(err.problem.fields));
      else setResult(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <section aria-labelledby="edit-source">
      <h2 id="edit-source">Settings</h2>
      <form class="form" onSubmit={(e) => void save(e)}>
        <Field label="Name" value={name} onInput={setName} error={errors['name']} required />
        <Field
          label="Rate limit (calls per second)"
          type="number"
          value={rate}
          onInput={setRate}
          error={errors['rateLimitPerSecond']}
          hint="Empty returns to the intake's default."
        />
        <button type="submit">Save</button>
        {result && <Status>{result}</Status>}
      </form>
    </section>
  );
}

function Snippets({ source, info, infoError }: { source: Source; info: Info | undefined; infoError: unknown }) {
  const [kind, setKind] = useState<SnippetKind>('analytics-node');
  // Without the info endpoint, guess the intake on this host's default port and say so.
  const intakeUrl = info?.intakeUrl ?? `${location.protocol}//${location.hostname}:8080`;
  const text = snippet(kind, intakeUrl, source.writeKey);
  return (
    <section aria-labelledby="snippets-heading">
      <h2 id="snippets-heading">Send a first call</h2>
      {infoError !== undefined && !info && (
        <p class="muted">The intake URL below is a guess: the admin API did not say where the intake is.</p>
      )}
      <div class="tabs" role="group" aria-label="Client">
        {(Object.keys(SNIPPET_LABELS) as SnippetKind[]).map((k) => (
          <button key={k} type="button" class={k === kind ? '' : 'secondary'} aria-pressed={k === kind} onClick={() => setKind(k)}>
            {SNIPPET_LABELS[k]}
          </button>
        ))}
      </div>
      <pre class="snippet" aria-label={`${SNIPPET_LABELS[kind]} snippet`} tabIndex={0}>
        {text}
      </pre>
      <CopyButton text={text} label="Copy snippet" />
    </section>
  );
}
