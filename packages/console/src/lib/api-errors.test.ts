import { fieldMessages, normaliseFieldPath, toApiProblem, unauthorizedMessage, unclaimed } from './api-errors';

describe('API errors for forms', () => {
  it('reads the error body, tolerating one that is not ours', () => {
    expect(
      toApiProblem(400, {
        success: false,
        code: 'invalid_request',
        message: 'settings.webhooks[1].url must match',
        fields: [{ field: 'settings.webhooks[1].url', message: 'must be an absolute http or https URL' }, { nope: 1 }],
      }),
    ).toEqual({
      status: 400,
      code: 'invalid_request',
      message: 'settings.webhooks[1].url must match',
      fields: [{ field: 'settings.webhooks[1].url', message: 'must be an absolute http or https URL' }],
    });
    expect(toApiProblem(502, '<html>bad gateway</html>')).toEqual({
      status: 502,
      code: 'http_502',
      message: 'the server answered 502',
      fields: [],
    });
  });

  it('keys messages by the path the inputs use, keeping the first per field', () => {
    expect(
      fieldMessages([
        { field: 'settings.webhooks[1].url', message: 'first' },
        { field: '/settings/webhooks/1/url', message: 'second' },
        { field: 'settings.webhooks.0.headers.X-Team', message: 'bad header' },
        { field: 'name', message: 'must be Webhooks' },
      ]),
    ).toEqual({
      'settings.webhooks[1].url': 'first',
      'settings.webhooks[0].headers.X-Team': 'bad header',
      name: 'must be Webhooks',
    });
    expect(normaliseFieldPath('(body)')).toBe('(body)');
    expect(normaliseFieldPath('')).toBe('');
  });

  it('lists the problems no input shows', () => {
    expect(unclaimed({ name: 'x', 'settings.sharedSecret': 'too short', '': 'at least one webhook' }, ['name'])).toEqual([
      'settings.sharedSecret: too short',
      'at least one webhook',
    ]);
  });

  it('tells a refused token from a session that ended', () => {
    expect(unauthorizedMessage(false)).toMatch(/^That token was refused/);
    expect(unauthorizedMessage(true)).toMatch(/session ended/);
  });
});
