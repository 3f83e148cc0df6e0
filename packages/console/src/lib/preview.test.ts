import { adminBodyValidator, validateNormalizedCall } from '@eventrelay/config';
import { emptyForm, type DestinationForm } from './destination-form';
import { emptyShaping } from './destination-shaping';
import {
  SAMPLE_CALL,
  callMessage,
  decisionText,
  headerLines,
  parseSampleCall,
  prettyBody,
  previewBody,
  previewFieldPath,
  type PreviewResult,
} from './preview';

const form = (extra: Partial<DestinationForm> = {}): DestinationForm => ({
  ...emptyForm(),
  webhooks: [{ url: 'https://a.test', headers: [] }],
  ...extra,
});

describe('preview', () => {
  it('prefills a track call the intake would take once it has its ids and times', () => {
    const parsed = parseSampleCall(SAMPLE_CALL);
    expect(parsed).toMatchObject({ ok: true, call: { type: 'track' } });
    const at = '2026-01-01T00:00:00.000Z';
    expect(validateNormalizedCall({ messageId: 'm-1', timestamp: at, receivedAt: at, ...(parsed.ok ? parsed.call : {}) })).toBe(true);
  });

  it('builds an UnsavedPreviewRequest of the form as it stands', () => {
    const built = previewBody(
      form({ shaping: { ...emptyShaping(), mapping: '{"e": {"@path": "event"}}' } }),
      '{"type": "track", "event": "A"}',
    );
    expect(built).toEqual({
      ok: true,
      body: {
        call: { type: 'track', event: 'A' },
        destination: {
          name: 'Webhooks',
          enabled: false,
          sourceIds: [],
          settings: { webhooks: [{ url: 'https://a.test' }], mapping: { e: { '@path': 'event' } } },
        },
      },
    });
    expect(built.ok && adminBodyValidator('UnsavedPreviewRequest')(built.body)).toBe(true);
  });

  it('sends nothing while the form or the call has a problem, saying which', () => {
    expect(previewBody(form({ shaping: { ...emptyShaping(), filters: '[' } }), SAMPLE_CALL)).toEqual({
      ok: false,
      problems: { filters: expect.stringMatching(/^not valid JSON/) },
    });
    expect(previewBody(form(), '')).toEqual({ ok: false, problems: { call: expect.stringMatching(/^enter a call as JSON/) } });
    expect(previewBody(form(), '[]')).toEqual({ ok: false, problems: { call: 'must be a JSON object: { … }' } });
    expect(previewBody({ ...form(), webhooks: [{ url: '', headers: [] }] }, SAMPLE_CALL)).toEqual({
      ok: false,
      problems: { 'settings.webhooks[0].url': 'enter the URL to deliver to' },
    });
  });

  it('names the destination’s problems as the form does, and gathers the call’s for its one input', () => {
    expect(previewFieldPath('destination.filters[0].drop')).toBe('filters[0].drop');
    expect(previewFieldPath('destination.settings.mapping.a.@path')).toBe('settings.mapping.a.@path');
    expect(previewFieldPath('filters[1]')).toBe('filters[1]');
    expect(previewFieldPath('call.type')).toBe('call.type');
    expect(callMessage({ 'call.type': 'must be one of "track"', call: 'is invalid', 'settings.webhooks': 'x' })).toBe(
      'type: must be one of "track"; is invalid',
    );
    expect(callMessage({ callback: 'x' })).toBeUndefined();
  });

  it('says the decision in words, rules counted from 1', () => {
    expect(decisionText({ send: true })).toBe('Sent');
    expect(decisionText({ send: false, rule: 0, name: 'no tests', reason: 'drop' })).toBe('Not sent: rule 1 (no tests) — drop');
    expect(decisionText({ send: false, rule: 2, reason: 'only' })).toBe('Not sent: rule 3 — only');
  });

  it('indents a JSON body for reading only when that changes it', () => {
    expect(prettyBody('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(prettyBody('{}')).toBeUndefined();
    expect(prettyBody('not json')).toBeUndefined();
  });

  it('lists eventrelay’s headers, then the static ones by their hints', () => {
    const request: PreviewResult['requests'][number] = {
      url: 'https://a.test',
      headers: { 'x-signature': 'abc', 'content-type': 'application/json' },
      staticHeaders: { Authorization: { set: true, last4: 'wxyz' }, 'X-Empty': { set: true } },
      body: '{}',
    };
    expect(headerLines(request)).toEqual([
      'content-type: application/json',
      'x-signature: abc',
      'Authorization: [write-only, …wxyz]',
      'X-Empty: [write-only]',
    ]);
  });
});
