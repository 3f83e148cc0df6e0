import { useId } from 'preact/hooks';
import { Field } from '../components/ui';
import {
  FILTERS_EXAMPLE,
  MAPPING_EXAMPLE,
  batchingField,
  shapingMessage,
  type BatchingInput,
  type ShapingInput,
} from '../lib/destination-shaping';

interface Props {
  readonly legend: string;
  readonly shaping: ShapingInput;
  readonly onChange: (shaping: ShapingInput) => void;
  readonly errors: Readonly<Record<string, string>>;
}

/** Filters, mapping and batching: JSON editors for the first two, since both are trees the API checks. */
export function ShapingFields({ legend, shaping, onChange, errors }: Props) {
  const base = useId();
  const setBatching = (change: Partial<BatchingInput>) => onChange({ ...shaping, batching: { ...shaping.batching, ...change } });
  const batchingError = shapingMessage('batching', errors);
  return (
    <fieldset>
      <legend>{legend}</legend>
      <Field
        label="Filters"
        multiline
        rows={6}
        value={shaping.filters}
        onInput={(filters) => onChange({ ...shaping, filters })}
        error={shapingMessage('filters', errors)}
        hint={`A JSON list of rules applied in order (drop, only, dropFields or keepFields); empty: every call is sent whole. Example: ${FILTERS_EXAMPLE}`}
      />
      <Field
        label="Mapping"
        multiline
        rows={6}
        value={shaping.mapping}
        onInput={(mapping) => onChange({ ...shaping, mapping })}
        error={shapingMessage('mapping', errors)}
        hint={`A JSON template of the body (@path, @template, @if, @coalesce, @literal); empty: the default body. Example: ${MAPPING_EXAMPLE}`}
      />
      <div class={`choice${batchingError ? ' invalid' : ''}`}>
        <input
          type="checkbox"
          id={`${base}-batching`}
          checked={shaping.batching.on}
          aria-invalid={batchingError ? 'true' : undefined}
          aria-describedby={batchingError ? `${base}-batching-error` : undefined}
          onChange={(e) => setBatching({ on: e.currentTarget.checked })}
        />
        <label for={`${base}-batching`}>
          Send calls in batches <span class="muted">(one POST carries a JSON list of bodies)</span>
        </label>
      </div>
      {batchingError && (
        <small id={`${base}-batching-error`} class="field-error">
          {batchingError}
        </small>
      )}
      {shaping.batching.on && (
        <div class="header-row" role="group" aria-label="Batch size">
          <Field
            label="Max calls per batch"
            type="number"
            value={shaping.batching.maxCalls}
            onInput={(maxCalls) => setBatching({ maxCalls })}
            error={errors[batchingField('maxCalls')]}
            hint="Default: 100."
          />
          <Field
            label="Max bytes per batch"
            type="number"
            value={shaping.batching.maxBytes}
            onInput={(maxBytes) => setBatching({ maxBytes })}
            error={errors[batchingField('maxBytes')]}
            hint="Default: 1048576 (1 MiB)."
          />
        </div>
      )}
    </fieldset>
  );
}
