import { createBody, emptyForm, formFromView, localProblems, patchBody } from './destination-form';

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
});
