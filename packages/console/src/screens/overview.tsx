import { useState } from 'preact/hooks';
import type { Api } from '../api';
import { Chart } from '../components/chart';
import { ErrorNote, when } from '../components/ui';
import { useLoad } from '../hooks';
import { href } from '../lib/routes';
import {
  errorChart,
  formatMs,
  formatRatio,
  lagChart,
  needsAttention,
  outcomeChart,
  sourceChart,
  type DestinationStats,
  type Stats,
  type StatsWindow,
} from '../lib/stats';

const REFRESH_MS = 5_000;
const OUTCOME_LINES = [
  { label: 'delivered', color: '#1a7f37' },
  { label: 'retrying', color: '#bf8700' },
  { label: 'dead-lettered', color: '#cf222e' },
];
const ERROR_LINES = [{ label: 'failed attempts', color: '#cf222e' }];
const LAG_LINES = [
  { label: 'average', color: '#0969da' },
  { label: 'max', color: '#8250df' },
];
const SOURCE_LINES = [
  { label: 'accepted', color: '#1a7f37' },
  { label: 'rejected', color: '#cf222e' },
];

export function Overview({ api }: { api: Api }) {
  const [window, setWindow] = useState<StatsWindow>('hour');
  const stats = useLoad(() => api.get<Stats>(`/stats?window=${window}`), window, REFRESH_MS);
  const s = stats.data;
  return (
    <>
      <h1>Overview</h1>
      <div class="toolbar" role="group" aria-label="Time window">
        {(['hour', 'day'] as const).map((w) => (
          <button key={w} type="button" class={w === window ? '' : 'secondary'} aria-pressed={w === window} onClick={() => setWindow(w)}>
            Last {w}
          </button>
        ))}
        <span class="muted" aria-live="polite">
          {s ? `Updated ${when(s.generatedAt)}, every 5 s` : stats.loading ? 'Loading…' : ''}
        </span>
      </div>
      <ErrorNote error={stats.error} />
      {s && (
        <>
          <section aria-labelledby="dest-heading">
            <h2 id="dest-heading">Destinations</h2>
            {s.destinations.length === 0 && (
              <p>
                No destinations yet. <a href="#/destinations/new">Set one up</a>.
              </p>
            )}
            <div class="cards">
              {s.destinations.map((d) => (
                <DestinationCard key={d.id} stats={s} d={d} />
              ))}
            </div>
          </section>
          <section aria-labelledby="src-heading">
            <h2 id="src-heading">Sources</h2>
            <table>
              <caption class="sr-only">Calls per source over the last {window}</caption>
              <thead>
                <tr>
                  <th scope="col">Source</th>
                  <th scope="col">Calls per minute</th>
                  <th scope="col">Accepted</th>
                  <th scope="col">Rejected</th>
                </tr>
              </thead>
              <tbody>
                {s.sources.map((src) => (
                  <tr key={src.id}>
                    <td>
                      <a href={href('sources', src.id)}>{src.name}</a>
                    </td>
                    <td>{src.totals.callsPerMinute.toFixed(1)}</td>
                    <td>{src.totals.accepted}</td>
                    <td>{src.totals.rejected}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <div class="cards">
              {s.sources.map((src) => (
                <Chart
                  key={src.id}
                  title={`${src.name}: calls`}
                  summary={`${src.totals.accepted} accepted, ${src.totals.rejected} rejected`}
                  data={sourceChart(s, src)}
                  lines={SOURCE_LINES}
                />
              ))}
            </div>
          </section>
        </>
      )}
    </>
  );
}

function DestinationCard({ stats, d }: { stats: Stats; d: DestinationStats }) {
  const t = d.totals;
  return (
    <article class={`card${needsAttention(d) ? ' attention' : ''}`} aria-labelledby={`d-${d.id}`}>
      <h3 id={`d-${d.id}`}>
        <a href={href('destinations', d.id)}>{d.name}</a> <small class="muted">{d.id}</small>{' '}
        <span class={`badge ${d.enabled ? 'on' : 'off'}`}>{d.enabled ? 'enabled' : 'disabled'}</span>
      </h3>
      <dl class="totals">
        <div>
          <dt>Delivered</dt>
          <dd>{t.delivered}</dd>
        </div>
        <div>
          <dt>Retrying</dt>
          <dd>{t.retrying}</dd>
        </div>
        <div>
          <dt>Dead-lettered</dt>
          <dd>
            {t.deadLettered > 0 ? (
              <a href={href('destinations', d.id, 'dead-letters')} aria-label={`${t.deadLettered} dead-lettered: open the dead letters`}>
                {t.deadLettered}
              </a>
            ) : (
              0
            )}
          </dd>
        </div>
        <div>
          <dt>Error ratio</dt>
          <dd>{formatRatio(t.errorRatio)}</dd>
        </div>
        <div>
          <dt>Lag avg / max</dt>
          <dd>
            {formatMs(t.lagMsAvg)} / {formatMs(t.lagMsMax)}
          </dd>
        </div>
      </dl>
      <Chart
        title="Outcomes per minute"
        summary={`${t.delivered} delivered, ${t.retrying} retrying, ${t.deadLettered} dead-lettered`}
        data={outcomeChart(stats, d)}
        lines={OUTCOME_LINES}
      />
      <Chart title="Error ratio" summary={formatRatio(t.errorRatio)} data={errorChart(stats, d)} lines={ERROR_LINES} unit="%" />
      <Chart
        title="End-to-end lag"
        summary={`average ${formatMs(t.lagMsAvg)}, max ${formatMs(t.lagMsMax)}`}
        data={lagChart(stats, d)}
        lines={LAG_LINES}
        unit=" ms"
      />
      <p>
        <a href={href('destinations', d.id, 'deliveries')}>Delivery log</a> ·{' '}
        <a href={href('destinations', d.id, 'dead-letters')}>Dead letters</a>
      </p>
    </article>
  );
}
