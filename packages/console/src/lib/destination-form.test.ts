import adminApiSchema from '@eventrelay/config/schemas/admin-api.schema.json';
import { fieldMessages } from './api-errors';
import {
  OVERLAPS,
  ROTATION_SECRET_MIN,
  createBody,
  emptyForm,
  emptyRotation,
  formFromView,
  localProblems,
  parseSetting,
  patchBody,
  reenableBody,
  rotationBody,
  rotationProblems,
  settingField,
  type DestinationForm,
  type DestinationView,
} from './destination-form';

const view = (settings: Partial<DestinationView['settings']>): DestinationView => ({
  id: 'dst_1',
  name: 'Webhooks',
  enabled: true,
  sourceIds: ['src_1'],
  settings: { webhooks: [{ url: 'https://a.test' }], sharedSecret: { set: true, last4: 'abcd' }, ...settings },
});

const withDelivery = (form: DestinationForm, delivery: Partial<DestinationForm['delivery']>): DestinationForm => ({
  ...form,
  delivery: { ...form.delivery, ...delivery },
});

describe('destination form', () => {
  it('becomes a DestinationCreate body, leaving out empty headers and secret', () => {
    const form = {
      ...emptyForm(),
      sourceIds: ['src_1'],
      webhooks: [
        {
          url: ' https://a.test/hook ',
          headers: [
            { name: 'X-Team', value: 'growth' },
            { name: '', value: '' },
          ],
        },
        { url: 'https://b.test/hook', headers: [] },
      ],
      sharedSecret: 'whsec_1234567890',
      enabled: true,
    };
    expect(createBody(form)).toEqual({
      name: 'Webhooks',
      enabled: true,
      sourceIds: ['src_1'],
      settings: {
        webhooks: [{ url: 'https://a.test/hook', headers: { 'X-Team': 'growth' } }, { url: 'https://b.test/hook' }],
        sharedSecret: 'whsec_1234567890',
      },
    });
    expect(createBody(emptyForm()).settings).toEqual({ webhooks: [{ url: '' }] });
  });

  it('patches with the stored header hints kept and the secret only when retyped', () => {
    const form = formFromView({
      id: 'dst_1',
      name: 'Webhooks',
      enabled: false,
      sourceIds: ['src_1'],
      settings: {
        webhooks: [{ url: 'https://a.test', headers: { Authorization: { set: true, last4: 'abcd' } } }],
        sharedSecret: { set: true },
      },
    });
    expect(form.webhooks[0]!.headers[0]).toEqual({ name: 'Authorization', value: '', hint: { set: true, last4: 'abcd' } });
    expect(patchBody(form)).toEqual({
      sourceIds: ['src_1'],
      settings: { webhooks: [{ url: 'https://a.test', headers: { Authorization: { set: true, last4: 'abcd' } } }] },
    });
    const retyped = { ...form, webhooks: [{ ...form.webhooks[0]!, headers: [{ ...form.webhooks[0]!.headers[0]!, value: 'Bearer new' }] }] };
    expect(patchBody({ ...retyped, sharedSecret: 'new-secret' })).toEqual({
      sourceIds: ['src_1'],
      settings: { webhooks: [{ url: 'https://a.test', headers: { Authorization: 'Bearer new' } }], sharedSecret: 'new-secret' },
    });
  });

  it('flags empty URLs, nameless headers and repeated header names by field path', () => {
    expect(
      localProblems({
        ...emptyForm(),
        webhooks: [
          { url: '', headers: [{ name: '', value: 'v' }] },
          {
            url: 'https://x',
            headers: [
              { name: 'X-A', value: '1' },
              { name: 'x-a', value: '2' },
            ],
          },
        ],
      }),
    ).toEqual({
      'settings.webhooks[0].url': 'enter the URL to deliver to',
      'settings.webhooks[0].headers[0]': 'give the header a name',
      'settings.webhooks[1].headers.X-A': 'this header is given twice',
      'settings.webhooks[1].headers.x-a': 'this header is given twice',
    });
    expect(localProblems({ ...emptyForm(), webhooks: [] })).toEqual({ 'settings.webhooks': 'add at least one URL' });
  });

  it('sends the delivery settings typed, in milliseconds, and leaves empty ones out of a create', () => {
    const form = withDelivery(
      { ...emptyForm(), webhooks: [{ url: 'https://a.test', headers: [] }], sharedSecret: 'whsec_1234567890', standardWebhooks: true },
      {
        timeoutMs: { text: '2.5', unit: 'seconds' },
        retryWindowMs: { text: ' 90 ', unit: 'minutes' },
        maxConcurrentRequests: { text: '8', unit: 'count' },
        autoDisableAfterMs: { text: '2', unit: 'hours' },
      },
    );
    expect(localProblems(form)).toEqual({});
    expect(createBody(form).settings).toEqual({
      webhooks: [{ url: 'https://a.test' }],
      sharedSecret: 'whsec_1234567890',
      timeoutMs: 2_500,
      retryWindowMs: 5_400_000,
      maxConcurrentRequests: 8,
      autoDisableAfterMs: 7_200_000,
      standardWebhooks: true,
    });
  });

  it('reads stored settings in the largest unit that shows them whole, and patches them back unchanged', () => {
    const stored = view({
      timeoutMs: 2_500,
      retryWindowMs: 5_400_000,
      maxRequestsPerSecond: 200,
      autoDisableAfterMs: 7_200_000,
      standardWebhooks: true,
    });
    const form = formFromView(stored);
    expect(form.delivery).toEqual({
      timeoutMs: { text: '2.5', unit: 'seconds' },
      retryWindowMs: { text: '90', unit: 'minutes' },
      maxConcurrentRequests: { text: '', unit: 'count' },
      maxRequestsPerSecond: { text: '200', unit: 'count' },
      autoDisableAfterMs: { text: '2', unit: 'hours' },
    });
    expect(form.standardWebhooks).toBe(true);
    expect(patchBody(form)).toEqual({
      sourceIds: ['src_1'],
      settings: {
        webhooks: [{ url: 'https://a.test' }],
        timeoutMs: 2_500,
        retryWindowMs: 5_400_000,
        maxRequestsPerSecond: 200,
        autoDisableAfterMs: 7_200_000,
        standardWebhooks: true,
      },
    });
  });

  it('patches an emptied setting that was set as null (the default again), and leaves out one never set', () => {
    const form = formFromView(view({ timeoutMs: 10_000, standardWebhooks: true }));
    const emptied = withDelivery({ ...form, standardWebhooks: false }, { timeoutMs: { text: '', unit: 'seconds' } });
    const settings = patchBody(emptied).settings as Record<string, unknown>;
    expect(settings).toEqual({ webhooks: [{ url: 'https://a.test' }], timeoutMs: null, standardWebhooks: null });
    expect(Object.keys(settings)).not.toContain('retryWindowMs');
    // A setting never stored stays out while empty, and is sent once typed.
    expect(patchBody(formFromView(view({}))).settings).toEqual({ webhooks: [{ url: 'https://a.test' }] });
    const typed = withDelivery(formFromView(view({})), { maxConcurrentRequests: { text: '16', unit: 'count' } });
    expect(patchBody(typed).settings).toEqual({ webhooks: [{ url: 'https://a.test' }], maxConcurrentRequests: 16 });
  });

  it('checks each setting against the schema’s bounds in the unit typed', () => {
    const problem = (name: Parameters<typeof parseSetting>[0], text: string, unit: DestinationForm['delivery']['timeoutMs']['unit']) => {
      const parsed = parseSetting(name, { text, unit });
      return parsed.kind === 'invalid' ? parsed.message : parsed;
    };
    expect(problem('timeoutMs', '1', 'seconds')).toEqual({ kind: 'value', value: 1_000 });
    expect(problem('timeoutMs', '30', 'seconds')).toEqual({ kind: 'value', value: 30_000 });
    expect(problem('timeoutMs', '0.5', 'seconds')).toBe('enter a number between 1 second and 30 seconds');
    expect(problem('timeoutMs', '31', 'seconds')).toBe('enter a number between 1 second and 30 seconds');
    expect(problem('retryWindowMs', '72', 'hours')).toEqual({ kind: 'value', value: 259_200_000 });
    expect(problem('retryWindowMs', '73', 'hours')).toBe('enter a number between 1 minute and 72 hours');
    expect(problem('retryWindowMs', '1', 'minutes')).toEqual({ kind: 'value', value: 60_000 });
    expect(problem('retryWindowMs', '0.5', 'minutes')).toBe('enter a number between 1 minute and 4320 minutes');
    expect(problem('maxConcurrentRequests', '1024', 'count')).toEqual({ kind: 'value', value: 1_024 });
    expect(problem('maxConcurrentRequests', '1025', 'count')).toBe('enter a number between 1 and 1024');
    expect(problem('maxConcurrentRequests', '1.5', 'count')).toBe('enter a whole number');
    expect(problem('maxRequestsPerSecond', '0', 'count')).toBe('enter a number between 1 and 100000');
    expect(problem('maxRequestsPerSecond', 'ten', 'count')).toBe('enter a number between 1 and 100000');
    expect(problem('autoDisableAfterMs', '720', 'hours')).toEqual({ kind: 'value', value: 2_592_000_000 });
    expect(problem('autoDisableAfterMs', '721', 'hours')).toBe('enter a number between 1 minute and 720 hours');
    expect(problem('autoDisableAfterMs', '  ', 'minutes')).toEqual({ kind: 'default' });

    // Each message lands on the setting's field, the path the API's own messages use too.
    const form = withDelivery(
      { ...emptyForm(), webhooks: [{ url: 'https://a.test', headers: [] }] },
      { timeoutMs: { text: '60', unit: 'seconds' }, maxRequestsPerSecond: { text: '0', unit: 'count' } },
    );
    expect(localProblems(form)).toEqual({
      'settings.timeoutMs': 'enter a number between 1 second and 30 seconds',
      'settings.maxRequestsPerSecond': 'enter a number between 1 and 100000',
    });
    expect(Object.keys(fieldMessages([{ field: '/settings/timeoutMs', message: 'must be <= 30000' }]))).toEqual([
      settingField('timeoutMs'),
    ]);
  });

  it('asks for a shared secret before Standard Webhooks headers, unless one is stored, and refuses a repeated URL', () => {
    const form = { ...emptyForm(), webhooks: [{ url: 'https://a.test', headers: [] }], standardWebhooks: true };
    expect(localProblems(form)).toEqual({ 'settings.standardWebhooks': 'needs a shared secret to sign with: set one below' });
    expect(localProblems({ ...form, sharedSecret: 'whsec_1234567890' })).toEqual({});
    expect(localProblems({ ...formFromView(view({})), standardWebhooks: true })).toEqual({});
    expect(
      localProblems({
        ...emptyForm(),
        webhooks: [
          { url: 'https://a.test', headers: [] },
          { url: ' https://a.test ', headers: [] },
        ],
      }),
    ).toEqual({ 'settings.webhooks[1].url': 'this URL is also URL 1' });
  });

  it('re-enables one disabled URL, sending the others back as read so they keep their state and headers', () => {
    const stored = view({
      webhooks: [
        {
          url: 'https://a.test',
          headers: { Authorization: { set: true, last4: 'abcd' } },
          disabled: true,
          disabledReason: 'answered 410 Gone',
        },
        { url: 'https://b.test', disabled: true, disabledReason: 'answered 410 Gone' },
        { url: 'https://c.test', headers: {} },
      ],
    });
    expect(reenableBody(stored, 'https://a.test')).toEqual({
      settings: {
        webhooks: [
          { url: 'https://a.test', headers: { Authorization: { set: true, last4: 'abcd' } }, disabled: false },
          { url: 'https://b.test' },
          { url: 'https://c.test' },
        ],
      },
    });
    // The form's own save never sends `disabled`, so it cannot re-enable a URL by accident.
    expect(JSON.stringify(patchBody(formFromView(stored)))).not.toContain('disabled');
  });

  it('asks to rotate the secret with the overlap chosen, the new secret only when typed', () => {
    expect(rotationBody(emptyRotation())).toEqual({ overlapMs: 86_400_000 });
    expect(rotationBody({ secret: '', overlap: '1h' })).toEqual({ overlapMs: 3_600_000 });
    expect(rotationBody({ secret: '', overlap: '7d' })).toEqual({ overlapMs: 604_800_000 });
    expect(rotationBody({ secret: ' whsec_new_secret_0001 ', overlap: 'none' })).toEqual({ secret: 'whsec_new_secret_0001', overlapMs: 0 });
    expect(rotationProblems({ secret: 'short', overlap: '24h' })).toEqual({
      secret: 'at least 16 characters, or leave empty to have one generated',
    });
    expect(rotationProblems({ secret: '0123456789abcdef', overlap: '24h' })).toEqual({});
    expect(rotationProblems(emptyRotation())).toEqual({});

    // The choices stay within what the API accepts.
    const rotation = adminApiSchema.definitions.SecretRotation.properties;
    expect(ROTATION_SECRET_MIN).toBe(rotation.secret.minLength);
    for (const o of OVERLAPS) {
      expect(o.ms).toBeGreaterThanOrEqual(rotation.overlapMs.minimum);
      expect(o.ms).toBeLessThanOrEqual(rotation.overlapMs.maximum);
    }
  });
});
