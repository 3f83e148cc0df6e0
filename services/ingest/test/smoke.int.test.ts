import { post, startTestIngest, type TestIngest } from '../../../test/support/ingest';

describe('ingest smoke', () => {
  let t: TestIngest;
  beforeAll(async () => {
    t = await startTestIngest({ label: 'smoke' });
  });
  afterAll(() => t.close());

  it('accepts a track call and puts it on the route queue', async () => {
    const res = await post(t.url, '/v1/track', { userId: 'u1', event: 'Signed Up' }, { writeKey: t.writeKey });
    expect(res).toMatchObject({ status: 200, json: { success: true } });
    const jobs = await t.routeJobs();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.calls[0]).toMatchObject({ type: 'track', userId: 'u1', event: 'Signed Up' });
  });
});
