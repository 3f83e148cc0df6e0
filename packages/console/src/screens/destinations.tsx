import type { TestSendResult } from '@eventrelay/config';
import { useState } from 'preact/hooks';
import { ApiError, encode, type Api } from '../api';
import { ErrorNote, Select, Status, focusFirstInvalid } from '../components/ui';
import { useLoad } from '../hooks';
import { fieldMessages, unclaimed } from '../lib/api-errors';
import { excerpt, firstRound, signatureOf, statusText, type DeliveryAttempt } from '../lib/attempts';
import {
  createBody,
  emptyForm,
  formFromView,
  localProblems,
  patchBody,
  type DestinationForm,
  type DestinationView,
} from '../lib/destination-form';
import { deliveryFilterQuery } from '../lib/filters';
import { href, withQuery } from '../lib/routes';
import { DestinationFields, type CatalogEntry } from './destination-form';
import type { Source } from './sources';

const CALL_TYPES = ['track', 'identify', 'page', 'screen', 'group', 'alias'] as const;
type CallType = (typeof CALL_TYPES)[number];

export function Destinations({ api }: { api: Api }) {
  const list = useLoad(() => api.get<DestinationView[]>('/destinations'), 'destinations');
  return (
    <>
      <h1>Destinations</h1>
      <p>
        <a class="button" href="#/destinations/new">
          New destination
        </a>
      </p>
      <ErrorNote error={list.error} />
      {list.data?.length === 0 && <p>No destinations yet.</p>}
      {list.data && list.data.length > 0 && (
        <table>
          <caption class="sr-only">Destinations</caption>
          <thead>
            <tr>
              <th scope="col">Destination</th>
              <th scope="col">State</th>
              <th scope="col">URLs</th>
              <th scope="col">Sources</th>
              <th scope="col">Logs</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((d) => (
              <tr key={d.id}>
                <td>
                  <a href={href('destinations', d.id)}>
                    {d.name} <code>{d.id}</code>
                  </a>
                </td>
                <td>
                  <span class={`badge ${d.enabled ? 'on' : 'off'}`}>{d.enabled ? 'enabled' : 'disabled'}</span>
                </td>
                <td>{d.settings.webhooks.map((w) => w.url).join(', ')}</td>
                <td>{d.sourceIds.join(', ') || '—'}</td>
                <td>
                  <a href={href('destinations', d.id, 'deliveries')}>Deliveries</a> ·{' '}
                  <a href={href('destinations', d.id, 'dead-letters')}>Dead letters</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function errorsOf(err: unknown): { fields: Record<string, string>; other: unknown } {
  if (err instanceof ApiError && err.problem.fields.length > 0) return { fields: fieldMessages(err.problem.fields), other: undefined };
  return { fields: {}, other: err };
}

const SHOWN_FIELDS = (form: DestinationForm): string[] => [
  'name',
  'sourceIds',
  'settings.webhooks',
  'settings.sharedSecret',
  ...form.webhooks.flatMap((w, i) => [
    `settings.webhooks[${i}].url`,
    ...w.headers.flatMap((h, j) => [`settings.webhooks[${i}].headers[${j}]`, `settings.webhooks[${i}].headers.${h.name.trim()}`]),
  ]),
];

export function NewDestination({ api }: { api: Api }) {
  const catalog = useLoad(() => api.get<CatalogEntry[]>('/catalog'), 'catalog');
  const sources = useLoad(() => api.get<Source[]>('/sources'), 'sources');
  const [form, setForm] = useState<DestinationForm>(emptyForm());
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const save = async (e: Event) => {
    e.preventDefault();
    setFailure(undefined);
    const local = localProblems(form);
    setErrors(local);
    if (Object.keys(local).length > 0) return focusFirstInvalid();
    setBusy(true);
    try {
      const created = await api.post<DestinationView>('/destinations', createBody(form));
      location.hash = href('destinations', created.id);
    } catch (err) {
      const { fields, other } = errorsOf(err);
      setErrors(fields);
      setFailure(other);
      focusFirstInvalid();
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <p class="crumbs">
        <a href="#/destinations">Destinations</a> /
      </p>
      <h1>New destination</h1>
      <ErrorNote error={catalog.error ?? sources.error} />
      <form class="form" onSubmit={(e) => void save(e)} noValidate>
        <DestinationFields form={form} onChange={setForm} errors={errors} catalog={catalog.data ?? []} sources={sources.data ?? []} />
        <Problems errors={errors} form={form} failure={failure} />
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save destination'}
        </button>
      </form>
    </>
  );
}

function Problems({ errors, form, failure }: { errors: Record<string, string>; form: DestinationForm; failure: unknown }) {
  const rest = unclaimed(errors, SHOWN_FIELDS(form));
  const count = Object.keys(errors).length;
  return (
    <div role="alert">
      {count > 0 && (
        <p class="error">
          {count === 1 ? 'One field needs' : `${count} fields need`} attention: see the message next to {count === 1 ? 'it' : 'each'}.
        </p>
      )}
      {rest.map((m) => (
        <p key={m} class="error">
          {m}
        </p>
      ))}
      <ErrorNote error={failure} />
    </div>
  );
}

export function DestinationDetail({ api, id }: { api: Api; id: string }) {
  const dest = useLoad(() => api.get<DestinationView>(`/destinations/${encode(id)}`), id);
  const sources = useLoad(() => api.get<Source[]>('/sources'), 'sources');
  const d = dest.data;
  return (
    <>
      <p class="crumbs">
        <a href="#/destinations">Destinations</a> /
      </p>
      <h1>
        {d ? d.name : 'Destination'} <code>{id}</code>
      </h1>
      <ErrorNote error={dest.error} />
      {d && (
        <>
          <p>
            <a href={href('destinations', id, 'deliveries')}>Delivery log</a> ·{' '}
            <a href={href('destinations', id, 'dead-letters')}>Dead letters</a>
          </p>
          <Toggle api={api} d={d} onChanged={dest.reload} />
          <TestSend api={api} d={d} sources={sources.data ?? []} />
          <EditDestination key={JSON.stringify(d)} api={api} d={d} sources={sources.data ?? []} onSaved={dest.reload} />
        </>
      )}
    </>
  );
}

function Toggle({ api, d, onChanged }: { api: Api; d: DestinationView; onChanged: () => void }) {
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const flip = async () => {
    setBusy(true);
    setFailure(undefined);
    try {
      await api.patch(`/destinations/${encode(d.id)}`, { enabled: !d.enabled });
      onChanged();
    } catch (err) {
      setFailure(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="state-heading" class="state">
      <h2 id="state-heading">State</h2>
      <p role="status" aria-live="polite">
        <span class={`badge ${d.enabled ? 'on' : 'off'}`}>{d.enabled ? 'Enabled' : 'Disabled'}</span>{' '}
        {d.enabled ? 'Calls from its sources are delivered.' : 'Nothing is delivered while it is disabled.'}
      </p>
      <button type="button" disabled={busy} onClick={() => void flip()}>
        {d.enabled ? 'Disable' : 'Enable'}
      </button>
      <ErrorNote error={failure} />
    </section>
  );
}

function EditDestination({ api, d, sources, onSaved }: { api: Api; d: DestinationView; sources: Source[]; onSaved: () => void }) {
  const [form, setForm] = useState<DestinationForm>(() => formFromView(d));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>();
  const [saved, setSaved] = useState(false);

  const save = async (e: Event) => {
    e.preventDefault();
    setFailure(undefined);
    setSaved(false);
    const local = localProblems(form);
    setErrors(local);
    if (Object.keys(local).length > 0) return focusFirstInvalid();
    try {
      await api.patch(`/destinations/${encode(d.id)}`, patchBody(form));
      setSaved(true);
      onSaved();
    } catch (err) {
      const { fields, other } = errorsOf(err);
      setErrors(fields);
      setFailure(other);
      focusFirstInvalid();
    }
  };

  return (
    <section aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      <form class="form" onSubmit={(e) => void save(e)} noValidate>
        <DestinationFields
          form={form}
          onChange={setForm}
          errors={errors}
          catalog={[]}
          sources={sources}
          existing={{ secretSet: d.settings.sharedSecret.set }}
        />
        <Problems errors={errors} form={form} failure={failure} />
        <button type="submit">Save settings</button>
        {saved && <Status>Saved.</Status>}
      </form>
    </section>
  );
}

type TestSendAnswer = TestSendResult;

const TEST_WAIT_MS = 30_000;
/** An attempt without its request: webhook-delivery runs with DELIVERY_LOG_DETAIL=failures or none. */
const NOT_KEPT = 'not kept (DELIVERY_LOG_DETAIL)';

/** Pushes one sample call through the real pipeline, then waits for its first attempt at each URL to land. */
function TestSend({ api, d, sources }: { api: Api; d: DestinationView; sources: Source[] }) {
  const [type, setType] = useState<CallType | ''>('track');
  const [sourceId, setSourceId] = useState('');
  const [state, setState] = useState<{
    phase: 'idle' | 'sending' | 'waiting' | 'done' | 'timeout';
    sent?: TestSendAnswer;
    attempts?: DeliveryAttempt[];
  }>({
    phase: 'idle',
  });
  const [failure, setFailure] = useState<unknown>();
  const connected = sources.filter((s) => d.sourceIds.includes(s.id));

  const send = async () => {
    setFailure(undefined);
    setState({ phase: 'sending' });
    try {
      const sent = await api.post<TestSendAnswer>(`/destinations/${encode(d.id)}/test-send`, {
        type: type || 'track',
        ...(sourceId ? { sourceId } : {}),
      });
      setState({ phase: 'waiting', sent });
      const deadline = Date.now() + TEST_WAIT_MS;
      let attempts: DeliveryAttempt[] = [];
      while (Date.now() < deadline) {
        const page = await api.get<{ items: DeliveryAttempt[] }>(
          `/destinations/${encode(d.id)}/deliveries?messageId=${encode(sent.messageId)}&limit=20`,
        );
        // The first round: one attempt per URL, shown in the order of the URLs.
        attempts = firstRound(
          page.items,
          d.settings.webhooks.map((w) => w.url),
        );
        if (attempts.length === d.settings.webhooks.length) return setState({ phase: 'done', sent, attempts });
        setState({ phase: 'waiting', sent, attempts });
        await new Promise((r) => setTimeout(r, 500));
      }
      setState({ phase: attempts.length > 0 ? 'done' : 'timeout', sent, attempts });
    } catch (err) {
      setState({ phase: 'idle' });
      setFailure(err);
    }
  };

  const attempts = state.attempts ?? [];
  return (
    <section aria-labelledby="test-heading">
      <h2 id="test-heading">Test send</h2>
      <div class="form inline">
        <Select label="Call type" value={type} options={CALL_TYPES.map((t) => ({ value: t, label: t }))} onChange={setType} />
        <Select
          label="As source"
          value={sourceId}
          options={[{ value: '', label: 'any connected source' }, ...connected.map((s) => ({ value: s.id, label: s.name }))]}
          onChange={setSourceId}
        />
        <button type="button" disabled={state.phase === 'sending' || state.phase === 'waiting'} onClick={() => void send()}>
          Send test call
        </button>
      </div>
      <div role="status" aria-live="polite">
        {state.phase === 'sending' && <p>Sending…</p>}
        {state.phase === 'waiting' && <p>Sent {state.sent?.messageId}; waiting for the delivery attempt…</p>}
        {state.phase === 'timeout' && (
          <p class="error">
            No attempt within 30 s for {state.sent?.messageId}. Is the destination enabled, and are the router and delivery services
            running?
          </p>
        )}
        {attempts.length > 0 && state.sent && (
          <section aria-label="Test send result">
            <p>
              Message{' '}
              <a href={withQuery(href('destinations', d.id, 'deliveries'), deliveryFilterQuery({ messageId: state.sent.messageId }))}>
                <code>{state.sent.messageId}</code>
              </a>
            </p>
            {attempts.map((a) => (
              <dl key={a.url} class="attempt" aria-label={`Attempt at ${a.url}`}>
                <dt>URL</dt>
                <dd>{a.url}</dd>
                <dt>Outcome</dt>
                <dd>
                  <span class={`badge ${a.outcome === 'success' ? 'on' : 'bad'}`}>{a.outcome}</span> {statusText(a)}
                </dd>
                <dt>Latency</dt>
                <dd>{Math.round(a.latencyMs)} ms</dd>
                <dt>Signature header</dt>
                <dd>
                  <code>{a.request ? (signatureOf(a) ?? 'none (no shared secret)') : NOT_KEPT}</code>
                </dd>
                <dt>Response</dt>
                <dd>
                  <pre class="excerpt">{a.request ? excerpt(a.response?.body) || '(empty)' : NOT_KEPT}</pre>
                </dd>
              </dl>
            ))}
          </section>
        )}
      </div>
      <ErrorNote error={failure} />
    </section>
  );
}
