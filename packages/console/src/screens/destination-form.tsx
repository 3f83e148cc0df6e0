import { useId } from 'preact/hooks';
import { Field, Select } from '../components/ui';
import {
  DELIVERY_SETTINGS,
  MAX_WEBHOOKS,
  SETTING_SPECS,
  emptyWebhook,
  headerField,
  settingField,
  webhookUrlField,
  type DeliverySetting,
  type DestinationForm,
  type SettingUnit,
  type WebhookRow,
} from '../lib/destination-form';
import { ShapingFields } from './destination-shaping';
import type { Source } from './sources';

export interface CatalogEntry {
  readonly name: string;
  readonly description: string;
}

interface Props {
  readonly form: DestinationForm;
  readonly onChange: (form: DestinationForm) => void;
  readonly errors: Readonly<Record<string, string>>;
  readonly catalog: readonly CatalogEntry[];
  readonly sources: readonly Source[];
  /** An existing destination: its type is fixed and its secret is write-only. */
  readonly existing?: { readonly secretSet: boolean };
}

const UNIT_LABELS: Record<SettingUnit, string> = { count: '', seconds: 'seconds', minutes: 'minutes', hours: 'hours' };

/** The seed's setup flow as one form, each step a fieldset: catalog, sources, URLs, secret, delivery, what is sent, enable. */
export function DestinationFields({ form, onChange, errors, catalog, sources, existing }: Props) {
  const base = useId();
  const setWebhook = (i: number, w: WebhookRow) => onChange({ ...form, webhooks: form.webhooks.map((x, j) => (j === i ? w : x)) });
  const setSetting = (name: DeliverySetting, change: { text?: string; unit?: SettingUnit }) =>
    onChange({ ...form, delivery: { ...form.delivery, [name]: { ...form.delivery[name], ...change } } });
  const standardError = errors[settingField('standardWebhooks')];
  return (
    <>
      {!existing && (
        <fieldset>
          <legend>1. Destination type</legend>
          {catalog.map((c) => (
            <div key={c.name} class="choice">
              <input
                type="radio"
                id={`${base}-cat-${c.name}`}
                name={`${base}-catalog`}
                checked={form.catalogName === c.name}
                onChange={() => onChange({ ...form, catalogName: c.name })}
              />
              <label for={`${base}-cat-${c.name}`}>
                <strong>{c.name}</strong> <span class="muted">{c.description}</span>
              </label>
            </div>
          ))}
          {errors['name'] && <small class="field-error">{errors['name']}</small>}
        </fieldset>
      )}
      <fieldset>
        <legend>{existing ? 'Sources' : '2. Sources'}</legend>
        {sources.length === 0 && (
          <p>
            No sources yet: <a href="#/sources">create one</a> first, or connect them later.
          </p>
        )}
        {sources.map((s) => (
          <div key={s.id} class="choice">
            <input
              type="checkbox"
              id={`${base}-src-${s.id}`}
              checked={form.sourceIds.includes(s.id)}
              onChange={(e) => {
                const on = e.currentTarget.checked;
                onChange({ ...form, sourceIds: on ? [...form.sourceIds, s.id] : form.sourceIds.filter((x) => x !== s.id) });
              }}
            />
            <label for={`${base}-src-${s.id}`}>
              {s.name} <code class="muted">{s.id}</code>
            </label>
          </div>
        ))}
        {errors['sourceIds'] && <small class="field-error">{errors['sourceIds']}</small>}
      </fieldset>
      <fieldset>
        <legend>{existing ? 'URLs' : '3. URLs'} (up to five, each with static headers)</legend>
        {form.webhooks.map((w, i) => (
          <div class="webhook" key={i} role="group" aria-label={`Webhook ${i + 1}`}>
            <Field
              label={`URL ${i + 1}`}
              type="url"
              value={w.url}
              placeholder="https://example.com/hooks/segment"
              onInput={(url) => setWebhook(i, { ...w, url })}
              error={errors[webhookUrlField(i)]}
            />
            {w.headers.map((h, j) => (
              <div class="header-row" key={j}>
                <Field
                  label={`URL ${i + 1} header ${j + 1} name`}
                  value={h.name}
                  onInput={(name) => setWebhook(i, { ...w, headers: w.headers.map((x, k) => (k === j ? { ...x, name } : x)) })}
                  error={errors[`settings.webhooks[${i}].headers[${j}]`]}
                />
                <Field
                  label={`URL ${i + 1} header ${j + 1} value`}
                  value={h.value}
                  placeholder={h.hint ? `stored${h.hint.last4 ? ` (…${h.hint.last4})` : ''}: leave empty to keep` : ''}
                  onInput={(value) => setWebhook(i, { ...w, headers: w.headers.map((x, k) => (k === j ? { ...x, value } : x)) })}
                  error={h.name ? errors[headerField(i, h.name)] : undefined}
                />
                <button
                  type="button"
                  class="secondary"
                  onClick={() => setWebhook(i, { ...w, headers: w.headers.filter((_, k) => k !== j) })}
                >
                  Remove header {j + 1} of URL {i + 1}
                </button>
              </div>
            ))}
            <div class="toolbar">
              <button
                type="button"
                class="secondary"
                onClick={() => setWebhook(i, { ...w, headers: [...w.headers, { name: '', value: '' }] })}
              >
                Add header to URL {i + 1}
              </button>
              {form.webhooks.length > 1 && (
                <button
                  type="button"
                  class="secondary"
                  onClick={() => onChange({ ...form, webhooks: form.webhooks.filter((_, k) => k !== i) })}
                >
                  Remove URL {i + 1}
                </button>
              )}
            </div>
          </div>
        ))}
        {form.webhooks.length < MAX_WEBHOOKS && (
          <button type="button" class="secondary" onClick={() => onChange({ ...form, webhooks: [...form.webhooks, emptyWebhook()] })}>
            Add URL
          </button>
        )}
        {errors['settings.webhooks'] && <small class="field-error">{errors['settings.webhooks']}</small>}
      </fieldset>
      <fieldset>
        <legend>{existing ? 'Shared secret' : '4. Shared secret'}</legend>
        <Field
          label="Shared secret"
          type="password"
          value={form.sharedSecret}
          onInput={(sharedSecret) => onChange({ ...form, sharedSecret })}
          error={errors['settings.sharedSecret']}
          hint={
            existing?.secretSet
              ? 'A secret is set: leave empty to keep it.'
              : 'Signs each request (X-Signature); the receiver checks it. Optional but recommended.'
          }
        />
        <div class={`choice${standardError ? ' invalid' : ''}`}>
          <input
            type="checkbox"
            id={`${base}-standard`}
            checked={form.standardWebhooks}
            aria-invalid={standardError ? 'true' : undefined}
            aria-describedby={standardError ? `${base}-standard-error` : undefined}
            onChange={(e) => onChange({ ...form, standardWebhooks: e.currentTarget.checked })}
          />
          <label for={`${base}-standard`}>
            Standard Webhooks headers <span class="muted">(also send webhook-id, webhook-timestamp and webhook-signature)</span>
          </label>
        </div>
        {standardError && (
          <small id={`${base}-standard-error`} class="field-error">
            {standardError}
          </small>
        )}
      </fieldset>
      <fieldset>
        <legend>{existing ? 'Delivery' : '5. Delivery'} (leave a field empty for the default)</legend>
        {DELIVERY_SETTINGS.map((name) => {
          const spec = SETTING_SPECS[name];
          const input = form.delivery[name];
          return (
            <div class="header-row" key={name}>
              <Field
                label={spec.label}
                type="number"
                value={input.text}
                onInput={(text) => setSetting(name, { text })}
                error={errors[settingField(name)]}
                hint={`Default: ${spec.fallback}.`}
              />
              {spec.units.length > 1 && (
                <Select
                  label={`${spec.label} unit`}
                  value={input.unit}
                  options={spec.units.map((u) => ({ value: u, label: UNIT_LABELS[u] }))}
                  onChange={(unit) => unit && setSetting(name, { unit })}
                />
              )}
            </div>
          );
        })}
      </fieldset>
      <ShapingFields
        legend={existing ? 'What is sent' : '6. What is sent'}
        shaping={form.shaping}
        onChange={(shaping) => onChange({ ...form, shaping })}
        errors={errors}
      />
      {!existing && (
        <fieldset>
          <legend>7. Enable</legend>
          <div class="choice">
            <input
              type="checkbox"
              id={`${base}-enabled`}
              checked={form.enabled}
              onChange={(e) => onChange({ ...form, enabled: e.currentTarget.checked })}
            />
            <label for={`${base}-enabled`}>Enable now (deliver calls as soon as it is saved)</label>
          </div>
        </fieldset>
      )}
    </>
  );
}
