import type { AudienceView } from '@eventrelay/config';
import { useState } from 'preact/hooks';
import { ApiError, type Api } from '../api';
import { ErrorNote, Field, Status, when } from '../components/ui';
import { useLoad } from '../hooks';
import { fieldMessages, unclaimed } from '../lib/api-errors';
import { EXAMPLE_CONDITION, parseCondition } from '../lib/condition';
import type { DestinationView } from '../lib/destination-form';
import type { Source } from './sources';

type Audience = AudienceView;

export function Audiences({ api }: { api: Api }) {
  const list = useLoad(() => api.get<Audience[]>('/audiences'), 'audiences', 5_000);
  const sources = useLoad(() => api.get<Source[]>('/sources'), 'sources');
  const destinations = useLoad(() => api.get<DestinationView[]>('/destinations'), 'destinations');
  return (
    <>
      <h1>Audiences</h1>
      <ErrorNote error={list.error} />
      {list.data?.length === 0 && <p>No audiences yet.</p>}
      {list.data && list.data.length > 0 && (
        <table>
          <caption class="sr-only">Audiences</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Trait</th>
              <th scope="col">Members</th>
              <th scope="col">Membership</th>
              <th scope="col">Last full sync</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((a) => (
              <tr key={a.id}>
                <td>
                  {a.name} <code class="muted">{a.id}</code>
                </td>
                <td>
                  <code>{a.traitKey}</code>
                </td>
                <td>{a.membership.members}</td>
                <td>{a.membership.status}</td>
                <td>{when(a.membership.lastFullSyncAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <NewAudience api={api} sources={sources.data ?? []} destinations={destinations.data ?? []} onCreated={list.reload} />
    </>
  );
}

function Checks({
  legend,
  items,
  chosen,
  onChange,
}: {
  legend: string;
  items: { id: string; label: string }[];
  chosen: string[];
  onChange: (ids: string[]) => void;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {items.length === 0 && <p class="muted">None yet.</p>}
      {items.map((it) => (
        <div class="choice" key={it.id}>
          <input
            type="checkbox"
            id={`${legend}-${it.id}`}
            checked={chosen.includes(it.id)}
            onChange={(e) => onChange(e.currentTarget.checked ? [...chosen, it.id] : chosen.filter((x) => x !== it.id))}
          />
          <label for={`${legend}-${it.id}`}>{it.label}</label>
        </div>
      ))}
    </fieldset>
  );
}

function NewAudience({
  api,
  sources,
  destinations,
  onCreated,
}: {
  api: Api;
  sources: Source[];
  destinations: DestinationView[];
  onCreated: () => void;
}) {
  const [name, setName] = useState('');
  const [sourceIds, setSourceIds] = useState<string[]>([]);
  const [destinationIds, setDestinationIds] = useState<string[]>([]);
  const [condition, setCondition] = useState(EXAMPLE_CONDITION);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>();
  const [created, setCreated] = useState<string | undefined>();
  const parsed = parseCondition(condition);
  const conditionError = parsed.ok
    ? errors['condition']
    : parsed.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ');

  const submit = async (e: Event) => {
    e.preventDefault();
    setFailure(undefined);
    setCreated(undefined);
    if (!parsed.ok) return;
    try {
      const a = await api.post<Audience>('/audiences', { name: name.trim(), sourceIds, destinationIds, condition: parsed.condition });
      setCreated(`Created ${a.name}: its members get the trait ${a.traitKey}.`);
      setErrors({});
      onCreated();
    } catch (err) {
      if (err instanceof ApiError && err.problem.fields.length > 0) setErrors(fieldMessages(err.problem.fields));
      else setFailure(err);
    }
  };

  return (
    <section aria-labelledby="new-audience">
      <h2 id="new-audience">New audience</h2>
      <form class="form" onSubmit={(e) => void submit(e)} noValidate>
        <Field label="Name" value={name} onInput={setName} error={errors['name']} required />
        <Checks
          legend="Sources that feed it"
          items={sources.map((s) => ({ id: s.id, label: s.name }))}
          chosen={sourceIds}
          onChange={setSourceIds}
        />
        {errors['sourceIds'] && <small class="field-error">{errors['sourceIds']}</small>}
        <Checks
          legend="Destinations that get membership changes"
          items={destinations.map((d) => ({ id: d.id, label: `${d.name} ${d.id}` }))}
          chosen={destinationIds}
          onChange={setDestinationIds}
        />
        <Field
          label="Condition (JSON)"
          multiline
          rows={10}
          value={condition}
          onInput={setCondition}
          error={conditionError}
          hint="A tree of all / any / not over trait tests ({trait: {key, equals}}) and event tests ({event: {name, atLeast, withinDays}})."
        />
        {unclaimed(errors, ['name', 'sourceIds', 'condition']).map((m) => (
          <p key={m} class="error" role="alert">
            {m}
          </p>
        ))}
        <ErrorNote error={failure} />
        <button type="submit" disabled={!parsed.ok}>
          Create audience
        </button>
        {created && <Status>{created}</Status>}
      </form>
    </section>
  );
}
