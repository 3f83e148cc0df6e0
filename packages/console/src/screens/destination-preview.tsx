import { useState } from 'preact/hooks';
import { ApiError, type Api } from '../api';
import { ErrorNote, Field, focusFirstInvalid } from '../components/ui';
import { fieldMessages } from '../lib/api-errors';
import type { DestinationForm } from '../lib/destination-form';
import {
  SAMPLE_CALL,
  callMessage,
  decisionText,
  headerLines,
  prettyBody,
  previewBody,
  previewFieldPath,
  type PreviewResult,
} from '../lib/preview';

interface Props {
  readonly api: Api;
  readonly form: DestinationForm;
  readonly errors: Readonly<Record<string, string>>;
  /** Problems go to the form's own errors, so each shows next to its input like a save's do. */
  readonly onErrors: (errors: Record<string, string>) => void;
  /** An existing destination: its stored secret is write-only, so the preview cannot sign with it. */
  readonly existing: boolean;
}

/**
 * What the destination as typed would do with a sample call, before it is saved: the filters'
 * decision, and each request's URL, headers and exact body. Nothing is delivered.
 */
export function PreviewPanel({ api, form, errors, onErrors, existing }: Props) {
  const [callText, setCallText] = useState(SAMPLE_CALL);
  const [result, setResult] = useState<PreviewResult | undefined>();
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const preview = async () => {
    setFailure(undefined);
    const built = previewBody(form, callText);
    if (!built.ok) {
      setResult(undefined);
      onErrors(built.problems);
      return focusFirstInvalid();
    }
    setBusy(true);
    try {
      setResult(await api.post<PreviewResult>('/destinations/preview', built.body));
      onErrors({});
    } catch (err) {
      setResult(undefined);
      if (err instanceof ApiError && err.problem.fields.length > 0) {
        onErrors(fieldMessages(err.problem.fields.map((f) => ({ ...f, field: previewFieldPath(f.field) }))));
        focusFirstInvalid();
      } else setFailure(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <fieldset class="preview">
      <legend>Preview</legend>
      <Field
        label="Sample call"
        multiline
        rows={8}
        value={callText}
        onInput={setCallText}
        error={callMessage(errors)}
        hint={`A call as JSON; messageId and timestamp are filled in. Nothing is delivered.${
          existing ? ' Signatures use a secret typed above: the stored one is not shown to the console.' : ''
        }`}
      />
      <button type="button" class="secondary" disabled={busy} onClick={() => void preview()}>
        Preview
      </button>
      <div role="status" aria-live="polite">
        {busy && <p>Previewing…</p>}
        {result && !busy && <PreviewAnswer result={result} />}
      </div>
      <ErrorNote error={failure} />
    </fieldset>
  );
}

function PreviewAnswer({ result }: { result: PreviewResult }) {
  return (
    <section aria-label="Preview result">
      <p>
        Decision: <strong class={`badge ${result.decision.send ? 'on' : 'off'}`}>{decisionText(result.decision)}</strong>
      </p>
      {result.error && <p class="error">The body cannot be built, so delivery would dead-letter the call: {result.error}</p>}
      {result.requests.map((r, i) => {
        const n = i + 1;
        const pretty = prettyBody(r.body);
        return (
          <section key={r.url} aria-label={`Request ${n}`}>
            <dl class="attempt">
              <dt>URL</dt>
              <dd>
                <code>{r.url}</code>
              </dd>
              <dt>Headers</dt>
              <dd>
                <pre aria-label={`Request ${n} headers`} tabIndex={0}>
                  {headerLines(r).join('\n')}
                </pre>
              </dd>
              <dt>Body, exact</dt>
              <dd>
                <pre aria-label={`Request ${n} body`} tabIndex={0}>
                  {r.body}
                </pre>
              </dd>
              {pretty && (
                <>
                  <dt>Body, indented</dt>
                  <dd>
                    <pre aria-label={`Request ${n} body, indented`} tabIndex={0}>
                      {pretty}
                    </pre>
                  </dd>
                </>
              )}
            </dl>
          </section>
        );
      })}
    </section>
  );
}
