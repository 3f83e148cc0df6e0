import type { Regulation } from '@eventrelay/config';
import { useState } from 'preact/hooks';
import { ApiError, encode, type Api } from '../api';
import { ErrorNote, Field, Select, when } from '../components/ui';
import { useLoad } from '../hooks';
import { fieldMessages } from '../lib/api-errors';
import { parseIds, rememberId } from '../lib/routes';

type RegulationType = 'DELETE' | 'SUPPRESS' | 'SUPPRESS_WITH_DELETE';

// There is no list endpoint: the ids this tab created are remembered for it.
const RECENT_KEY = 'eventrelay.console.regulations';
const TYPES: { value: RegulationType; label: string }[] = [
  { value: 'DELETE', label: 'DELETE: erase and notify destinations' },
  { value: 'SUPPRESS', label: 'SUPPRESS: drop their later calls' },
  { value: 'SUPPRESS_WITH_DELETE', label: 'SUPPRESS_WITH_DELETE: both' },
];

export function Regulations({ api }: { api: Api }) {
  const [ids, setIds] = useState<string[]>(() => parseIds(sessionStorage.getItem(RECENT_KEY)));
  const [lookup, setLookup] = useState('');
  const remember = (id: string) => {
    const next = rememberId(ids, id);
    sessionStorage.setItem(RECENT_KEY, JSON.stringify(next));
    setIds(next);
  };
  return (
    <>
      <h1>Regulations</h1>
      <NewRegulation api={api} onCreated={remember} />
      <section aria-labelledby="find-reg">
        <h2 id="find-reg">Look up a regulation</h2>
        <form
          class="form inline"
          onSubmit={(e) => {
            e.preventDefault();
            if (lookup.trim()) remember(lookup.trim());
            setLookup('');
          }}
        >
          <Field label="Regulation id" value={lookup} onInput={setLookup} />
          <button type="submit">Show</button>
        </form>
      </section>
      <section aria-labelledby="recent-reg">
        <h2 id="recent-reg">Recent in this tab</h2>
        {ids.length === 0 && <p>None yet.</p>}
        {ids.map((id) => (
          <RegulationCard key={id} api={api} id={id} />
        ))}
      </section>
    </>
  );
}

function NewRegulation({ api, onCreated }: { api: Api; onCreated: (id: string) => void }) {
  const [type, setType] = useState<RegulationType | ''>('DELETE');
  const [subjects, setSubjects] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setFailure(undefined);
    setErrors({});
    const subjectIds = [...new Set(subjects.split(/[\s,]+/).filter(Boolean))];
    try {
      const r = await api.post<Regulation>('/regulations', { regulationType: type || 'DELETE', subjectType: 'USER_ID', subjectIds });
      setSubjects('');
      onCreated(r.id);
    } catch (err) {
      if (err instanceof ApiError && err.problem.fields.length > 0) setErrors(fieldMessages(err.problem.fields));
      else setFailure(err);
    }
  };
  return (
    <section aria-labelledby="new-reg">
      <h2 id="new-reg">New regulation</h2>
      <form class="form" onSubmit={(e) => void submit(e)} noValidate>
        <Select label="Type" value={type} options={TYPES} onChange={setType} />
        <Field
          label="User ids"
          multiline
          rows={4}
          value={subjects}
          onInput={setSubjects}
          error={errors['subjectIds']}
          hint="One per line or separated by commas."
        />
        <ErrorNote error={failure} />
        <button type="submit">Create regulation</button>
      </form>
    </section>
  );
}

function RegulationCard({ api, id }: { api: Api; id: string }) {
  const reg = useLoad(() => api.get<Regulation>(`/regulations/${encode(id)}`), id, 3_000);
  const r = reg.data;
  return (
    <article class="card" aria-labelledby={`reg-${id}`}>
      <h3 id={`reg-${id}`}>
        <code>{id}</code> {r && <span class={`badge ${r.status === 'finished' ? 'on' : 'off'}`}>{r.status}</span>}
      </h3>
      <ErrorNote error={reg.error} />
      {r && (
        <>
          <p>
            {r.regulationType} of {r.subjectCount} users, created {when(r.createdAt)}
            {r.finishedAt ? `, finished ${when(r.finishedAt)}` : ''}. {r.counts.subjectsDone} done, {r.counts.deleteNotices} delete notices,{' '}
            {r.counts.profilesErased} profiles erased{r.counts.suppressed !== undefined ? `, ${r.counts.suppressed} suppressed` : ''}.
          </p>
          {r.receipts && (
            <table>
              <caption>Delete notices per destination</caption>
              <thead>
                <tr>
                  <th scope="col">Destination</th>
                  <th scope="col">Notices</th>
                  <th scope="col">Delivered</th>
                  <th scope="col">Dead-lettered</th>
                  <th scope="col">Dropped</th>
                  <th scope="col">Pending</th>
                </tr>
              </thead>
              <tbody>
                {r.receipts.destinations.map((d) => (
                  <tr key={d.destinationId}>
                    <td>
                      <code>{d.destinationId}</code>
                    </td>
                    <td>{d.notices}</td>
                    <td>{d.delivered}</td>
                    <td>{d.deadLettered}</td>
                    <td>{d.dropped}</td>
                    <td>{d.pending}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </article>
  );
}
