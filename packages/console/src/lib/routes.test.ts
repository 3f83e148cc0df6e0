import { href, parseIds, parseRoute, rememberId, withQuery } from './routes';

describe('hash routes', () => {
  it('maps each screen', () => {
    expect(parseRoute('')).toEqual({ screen: 'overview' });
    expect(parseRoute('#/')).toEqual({ screen: 'overview' });
    expect(parseRoute('#/sources')).toEqual({ screen: 'sources' });
    expect(parseRoute('#/sources/src_1')).toEqual({ screen: 'source', id: 'src_1' });
    expect(parseRoute('#/sources/src_1/debugger')).toEqual({ screen: 'debugger', id: 'src_1' });
    expect(parseRoute('#/destinations/new')).toEqual({ screen: 'new-destination' });
    expect(parseRoute('#/destinations/dst%20x')).toEqual({ screen: 'destination', id: 'dst x' });
    expect(parseRoute('#/destinations/d/deliveries?status=failed')).toEqual({ screen: 'deliveries', id: 'd', query: 'status=failed' });
    expect(parseRoute('#/destinations/d/dead-letters')).toEqual({ screen: 'dead-letters', id: 'd', query: '' });
    expect(parseRoute('#/audit')).toEqual({ screen: 'audit' });
    expect(parseRoute('#/nowhere/x')).toEqual({ screen: 'not-found', path: '/nowhere/x' });
  });

  it('builds links that parse back', () => {
    const link = withQuery(href('destinations', 'dst/1', 'deliveries'), 'status=failed');
    expect(link).toBe('#/destinations/dst%2F1/deliveries?status=failed');
    expect(parseRoute(link)).toEqual({ screen: 'deliveries', id: 'dst/1', query: 'status=failed' });
  });

  it('keeps recent ids newest first, without repeats, capped', () => {
    expect(rememberId(['a', 'b'], 'b')).toEqual(['b', 'a']);
    expect(rememberId(['a', 'b', 'c'], 'd', 3)).toEqual(['d', 'a', 'b']);
    expect(parseIds('not json')).toEqual([]);
    expect(parseIds('["a",1,"b"]')).toEqual(['a', 'b']);
  });
});
