import { useState } from 'preact/hooks';
import { tokenAccepted } from '../api';
import { Field } from '../components/ui';
import { unauthorizedMessage } from '../lib/api-errors';

export function SignIn({ message, onSignedIn }: { message: string | undefined; onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [problem, setProblem] = useState<string | undefined>(message);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const t = token.trim();
    if (!t) return setProblem('Enter an admin token.');
    setBusy(true);
    try {
      if (await tokenAccepted(t)) onSignedIn(t);
      else setProblem(unauthorizedMessage(false));
    } catch (err) {
      setProblem(`The admin API cannot be reached: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in" id="main">
      <h1>eventrelay console</h1>
      <form onSubmit={(e) => void submit(e)} aria-describedby="sign-in-note">
        <p id="sign-in-note">
          Sign in with an admin token (one of <code>ADMIN_TOKEN</code>). It is kept in this tab only and sent as a bearer header.
        </p>
        <Field label="Admin token" type="password" value={token} onInput={setToken} autoComplete="current-password" required />
        {problem && (
          <p class="error" role="alert">
            {problem}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
