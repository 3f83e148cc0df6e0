import { useMemo, useState } from 'preact/hooks';
import { createApi, session, type Api } from './api';
import { useRoute } from './hooks';
import { unauthorizedMessage } from './lib/api-errors';
import type { Route } from './lib/routes';
import { SignIn } from './screens/sign-in';
import { Overview } from './screens/overview';
import { Sources, SourceDetail } from './screens/sources';
import { Debugger } from './screens/debugger';
import { Destinations, DestinationDetail, NewDestination } from './screens/destinations';
import { Deliveries } from './screens/deliveries';
import { DeadLetters } from './screens/dead-letters';
import { Audiences } from './screens/audiences';
import { Regulations } from './screens/regulations';
import { AuditLog } from './screens/audit';

const NAV: readonly { href: string; label: string; screens: readonly Route['screen'][] }[] = [
  { href: '#/', label: 'Overview', screens: ['overview'] },
  { href: '#/sources', label: 'Sources', screens: ['sources', 'source', 'debugger'] },
  {
    href: '#/destinations',
    label: 'Destinations',
    screens: ['destinations', 'new-destination', 'destination', 'deliveries', 'dead-letters'],
  },
  { href: '#/audiences', label: 'Audiences', screens: ['audiences'] },
  { href: '#/regulations', label: 'Regulations', screens: ['regulations'] },
  { href: '#/audit', label: 'Audit log', screens: ['audit'] },
];

export function App() {
  const [token, setToken] = useState<string | null>(() => session.load());
  const [message, setMessage] = useState<string | undefined>();
  const route = useRoute();

  const api = useMemo(
    () =>
      token
        ? createApi(token, () => {
            session.clear();
            setMessage(unauthorizedMessage(true));
            setToken(null);
          })
        : null,
    [token],
  );

  if (!api) {
    return (
      <SignIn
        message={message}
        onSignedIn={(t) => {
          session.save(t);
          setMessage(undefined);
          setToken(t);
        }}
      />
    );
  }

  return (
    <div class="layout">
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">eventrelay</span>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li key={n.href}>
                <a href={n.href} aria-current={n.screens.includes(route.screen) ? 'page' : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            session.clear();
            setMessage('You signed out.');
            setToken(null);
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Screen route={route} api={api} />
      </main>
    </div>
  );
}

function Screen({ route, api }: { route: Route; api: Api }) {
  switch (route.screen) {
    case 'overview':
      return <Overview api={api} />;
    case 'sources':
      return <Sources api={api} />;
    case 'source':
      return <SourceDetail api={api} id={route.id} />;
    case 'debugger':
      return <Debugger api={api} id={route.id} />;
    case 'destinations':
      return <Destinations api={api} />;
    case 'new-destination':
      return <NewDestination api={api} />;
    case 'destination':
      return <DestinationDetail api={api} id={route.id} />;
    case 'deliveries':
      return <Deliveries api={api} id={route.id} query={route.query} />;
    case 'dead-letters':
      return <DeadLetters api={api} id={route.id} query={route.query} />;
    case 'audiences':
      return <Audiences api={api} />;
    case 'regulations':
      return <Regulations api={api} />;
    case 'audit':
      return <AuditLog api={api} />;
    case 'not-found':
      return (
        <>
          <h1>Not found</h1>
          <p>
            There is no page at <code>{route.path}</code>. <a href="#/">Go to the overview</a>.
          </p>
        </>
      );
  }
}
