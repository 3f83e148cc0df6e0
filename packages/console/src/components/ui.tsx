import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { ApiError } from '../api';

function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.problem.code === 'not_found' && /no route/.test(err.problem.message))
      return 'This admin API does not offer this yet (the endpoint is missing): update the services.';
    return `${err.problem.message} (${err.problem.code})`;
  }
  return err instanceof Error ? err.message : String(err);
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {errorText(error)}
    </p>
  );
}

export function Status({ children }: { children: ComponentChildren }) {
  return (
    <p class="status" role="status" aria-live="polite">
      {children}
    </p>
  );
}

interface FieldProps {
  readonly label: string;
  readonly value: string;
  readonly onInput: (value: string) => void;
  readonly error?: string | undefined;
  readonly type?: 'text' | 'password' | 'number' | 'url' | 'datetime-local';
  readonly placeholder?: string;
  readonly hint?: string;
  readonly required?: boolean;
  readonly autoComplete?: string;
  readonly multiline?: boolean;
  readonly rows?: number;
}

/** A labelled input whose error is tied to it for screen readers (aria-describedby). */
export function Field(p: FieldProps) {
  const id = useId();
  const describedBy = [p.error ? `${id}-error` : '', p.hint ? `${id}-hint` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    value: p.value,
    placeholder: p.placeholder,
    required: p.required,
    // Seconds too: a time from a shared link keeps them.
    step: p.type === 'datetime-local' ? 1 : undefined,
    'aria-invalid': p.error ? ('true' as const) : undefined,
    'aria-describedby': describedBy,
    onInput: (e: Event) => p.onInput((e.currentTarget as HTMLInputElement).value),
  };
  return (
    <div class={`field${p.error ? ' invalid' : ''}`}>
      <label for={id}>{p.label}</label>
      {p.multiline ? (
        <textarea {...common} rows={p.rows ?? 6} spellcheck={false} />
      ) : (
        // Preact's input types are a union per type; a type chosen at run time needs the cast.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
        <input {...common} type={(p.type ?? 'text') as 'text'} autoComplete={p.autoComplete ?? 'off'} />
      )}
      {p.hint && (
        <small id={`${id}-hint`} class="hint">
          {p.hint}
        </small>
      )}
      {p.error && (
        <small id={`${id}-error`} class="field-error">
          {p.error}
        </small>
      )}
    </div>
  );
}

export function Select<T extends string>(p: {
  label: string;
  value: T | '';
  options: readonly { value: T | ''; label: string }[];
  onChange: (value: T | '') => void;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{p.label}</label>
      <select id={id} value={p.value} onChange={(e) => p.onChange(e.currentTarget.value as T | '')}>
        {p.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  return (
    <button type="button" class="secondary" onClick={() => void navigator.clipboard?.writeText(text)}>
      {label}
    </button>
  );
}

export function Json({ value, label }: { value: unknown; label: string }) {
  return (
    <pre class="json" aria-label={label} tabIndex={0}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

export const when = (iso: string | undefined): string => (iso ? new Date(iso).toLocaleString() : '—');

/** After a failed save, keyboard and screen-reader users land on the first field to fix. */
export function focusFirstInvalid(): void {
  requestAnimationFrame(() => document.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
}
