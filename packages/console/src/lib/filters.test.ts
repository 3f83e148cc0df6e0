import {
  deadLetterFilterQuery,
  deliveryFilterQuery,
  isoToLocalInput,
  localInputToIso,
  pageQuery,
  parseDeadLetterFilter,
  parseDeliveryFilter,
  replayFilterBody,
} from './filters';

describe('filters in the URL', () => {
  it('round-trips a delivery filter through the query string', () => {
    const filter = {
      status: 'failed',
      statusClass: '5xx',
      messageId: 'msg-1',
      since: '2026-01-02T03:04:00.000Z',
      until: '2026-01-02T05:00:00.000Z',
    } as const;
    const query = deliveryFilterQuery(filter);
    expect(query).toBe(
      'status=failed&statusClass=5xx&messageId=msg-1&since=2026-01-02T03%3A04%3A00.000Z&until=2026-01-02T05%3A00%3A00.000Z',
    );
    expect(parseDeliveryFilter(query)).toEqual(filter);
  });

  it('drops what a hand-edited URL gets wrong instead of sending it to the API', () => {
    expect(parseDeliveryFilter('status=great&statusClass=6xx&messageId=%20%20&since=yesterday')).toEqual({});
    expect(parseDeliveryFilter('since=2026-01-02T03:04:00%2B02:00')).toEqual({ since: '2026-01-02T01:04:00.000Z' });
    expect(deliveryFilterQuery({})).toBe('');
  });

  it('round-trips a dead-letter filter and adds paging for the API', () => {
    const filter = { q: 'timeout', since: '2026-01-02T03:04:00.000Z' };
    expect(parseDeadLetterFilter(deadLetterFilterQuery(filter))).toEqual(filter);
    expect(pageQuery(filter, { limit: 50, cursor: 'c1' })).toBe('q=timeout&since=2026-01-02T03%3A04%3A00.000Z&limit=50&cursor=c1');
    expect(pageQuery({}, { limit: 100 })).toBe('limit=100');
  });

  it('asks to replay all letters when no filter is set, and the filter otherwise', () => {
    expect(replayFilterBody({})).toEqual({ all: true });
    expect(replayFilterBody({ q: 'x', since: undefined })).toEqual({ filter: { q: 'x' } });
  });

  it('converts between datetime-local values and ISO', () => {
    const iso = localInputToIso('2026-03-04T05:06');
    expect(iso).toBe(new Date(2026, 2, 4, 5, 6).toISOString());
    expect(isoToLocalInput(iso)).toBe('2026-03-04T05:06:00');
    // An end bound takes the whole minute, or second, shown.
    expect(localInputToIso('2026-03-04T05:06', 'end')).toBe(new Date(2026, 2, 4, 5, 6, 59, 999).toISOString());
    expect(localInputToIso('2026-03-04T05:06:30', 'end')).toBe(new Date(2026, 2, 4, 5, 6, 30, 999).toISOString());
    // A bound with seconds (from a shared URL) keeps them through the form.
    expect(isoToLocalInput(new Date(2026, 2, 4, 5, 6, 30).toISOString())).toBe('2026-03-04T05:06:30');
    expect(localInputToIso('')).toBeUndefined();
    expect(isoToLocalInput('garbage')).toBe('');
  });
});
