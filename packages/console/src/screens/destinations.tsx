import type { TestSendResult } from '@eventrelay/config';
import { useState } from 'preact/hooks';
import { ApiError, encode, type Api } from '../api';
import { CopyButton, ErrorNote, Field, Select, Status, focusFirstInvalid, when } from '../components/ui';
import { useLoad } from '../hooks';
import { fieldMessages, unclaimed } from '../lib/api-errors';
import { excerpt, firstRound, signatureOf, statusText, type DeliveryAttempt } from '../lib/attempts';
import {
  DELIVERY_SETTINGS,
  OVERLAPS,
  createBody,
  emptyForm,
  emptyRotation,
  formFromView,
  localProblems,
  patchBody,
  reenableBody,
  rotationBody,
  rotationProblems,
  settingField,
  type DestinationForm,
  type DestinationView,
  type Overlap,
  type RotationForm,
  type SecretRotated,
} from '../lib/destination-form';
import { shapingPartOf } from '../lib/destination-shaping';
import { deliveryFilterQuery } from '../lib/filters';
import { isCallField } from '../lib/preview';
import { href, withQuery } from '../lib/routes';
import { DestinationFields, type CatalogEntry } from './destination-form';
import { PreviewPanel } from './destination-preview';
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
                <td>{d.settings.webhooks.map((w) => (w.disabled ? `${w.url} (disabled)` : w.url)).join(', ')}</td>
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

/** The fields an input shows; filters, mapping, batching and the sample call claim every path under theirs. */
const SHOWN_FIELDS = (form: DestinationForm, errors: Record<string, string>): string[] => [
  ...Object.keys(errors).filter((field) => shapingPartOf(field) !== undefined || isCallField(field)),
  'name',
  'sourceIds',
  'settings.webhooks',
  'settings.sharedSecret',
  settingField('standardWebhooks'),
  ...DELIVERY_SETTINGS.map(settingField),
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
        <PreviewPanel api={api} form={form} errors={errors} onErrors={setErrors} existing={false} />
        <Problems errors={errors} form={form} failure={failure} />
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save destination'}
        </button>
      </form>
    </>
  );
}

function Problems({ errors, form, failure }: { errors: Record<string, string>; form: DestinationForm; failure: unknown }) {
  const rest = unclaimed(errors, SHOWN_FIELDS(form, errors));
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
          <UrlStates api={api} d={d} onChanged={dest.reload} />
          <TestSend api={api} d={d} sources={sources.data ?? []} />
          <RotateSecret api={api} d={d} onRotated={dest.reload} />
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

/** Each URL's state: eventrelay disables one that answers 410 Gone, and only a person re-enables it. */
function UrlStates({ api, d, onChanged }: { api: Api; d: DestinationView; onChanged: () => void }) {
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const reenable = async (url: string) => {
    setBusy(true);
    setFailure(undefined);
    try {
      await api.patch(`/destinations/${encode(d.id)}`, reenableBody(d, url));
      onChanged();
    } catch (err) {
      setFailure(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="urls-heading">
      <h2 id="urls-heading">URLs</h2>
      <ul class="url-states">
        {d.settings.webhooks.map((w, i) => (
          <li key={w.url}>
            <code>{w.url}</code>{' '}
            {w.disabled ? (
              <>
                <span class="badge bad">disabled: {w.disabledReason ?? 'by an operator'}</span>{' '}
                <button type="button" class="secondary" disabled={busy} onClick={() => void reenable(w.url)}>
                  Re-enable URL {i + 1}
                </button>
              </>
            ) : (
              <span class="badge on">delivering</span>
            )}
          </li>
        ))}
      </ul>
      <ErrorNote error={failure} />
    </section>
  );
}

/**
 * A new shared secret, the current one signing next to it for the overlap chosen so receivers can
 * switch without refusing calls (docs/receivers.md, "Rotating a secret"). The API shows the new
 * secret once, in its answer; the reload that follows shows only its hint.
 */
function RotateSecret({ api, d, onRotated }: { api: Api; d: DestinationView; onRotated: () => void }) {
  const [form, setForm] = useState<RotationForm>(emptyRotation());
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [rotated, setRotated] = useState<SecretRotated | undefined>();
  const previous = d.settings.previousSecret;

  const rotate = async () => {
    setFailure(undefined);
    const local = rotationProblems(form);
    setErrors(local);
    if (Object.keys(local).length > 0) return focusFirstInvalid();
    if (
      form.overlap === 'none' &&
      d.settings.sharedSecret.set &&
      !confirm('Replace the secret at once? Receivers that only know the current one will refuse calls.')
    )
      return;
    setBusy(true);
    try {
      const answer = await api.post<SecretRotated>(`/destinations/${encode(d.id)}/rotate-secret`, rotationBody(form));
      setRotated(answer);
      setForm(emptyRotation());
      onRotated();
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
    <section aria-labelledby="secret-heading">
      <h2 id="secret-heading">Secret rotation</h2>
      <p>
        {d.settings.sharedSecret.set
          ? `A secret is set${d.settings.sharedSecret.last4 ? ` (…${d.settings.sharedSecret.last4})` : ''}.`
          : 'No secret is set: rotating sets one, and calls are signed from then on.'}{' '}
        {previous && (
          <>
            The previous secret{previous.last4 ? ` (…${previous.last4})` : ''} still signs next to it until{' '}
            <time dateTime={previous.expiresAt}>{when(previous.expiresAt)}</time>.
          </>
        )}
      </p>
      {rotated && (
        <div class="notice" role="status" aria-live="polite">
          <p>The new secret is shown once here; copy it now:</p>
          <p>
            <code class="key" aria-label="New shared secret">
              {rotated.secret}
            </code>{' '}
            <CopyButton text={rotated.secret} label="Copy secret" />
          </p>
          <p>
            {rotated.previousExpiresAt ? (
              <>
                The previous secret stops signing at <time dateTime={rotated.previousExpiresAt}>{when(rotated.previousExpiresAt)}</time>.
              </>
            ) : (
              'No previous secret signs any more: only the new one does.'
            )}
          </p>
        </div>
      )}
      <div class="form inline">
        <Select<Overlap>
          label="Overlap"
          value={form.overlap}
          options={OVERLAPS.map((o) => ({ value: o.id, label: o.label }))}
          onChange={(overlap) => overlap && setForm({ ...form, overlap })}
        />
        <Field
          label="New secret (optional)"
          type="password"
          value={form.secret}
          onInput={(secret) => setForm({ ...form, secret })}
          error={errors['secret']}
          hint="Leave empty to have one generated."
        />
        <button type="button" class="danger" disabled={busy} onClick={() => void rotate()}>
          Rotate secret
        </button>
      </div>
      {unclaimed(errors, ['secret']).map((m) => (
        <p key={m} class="error">
          {m}
        </p>
      ))}
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
        <PreviewPanel api={api} form={form} errors={errors} onErrors={setErrors} existing />
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
