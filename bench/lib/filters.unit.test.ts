/** The filter phases' rules: valid as a config file has them, and refusing none of the calls the bench sends. */
import { compileFilters } from '../../packages/config/dist/src/filters/destination-filters.js';
import type { FilterRule } from '../../packages/config/dist/src/generated/contracts.js';
import { benchDestinations, FILTER_RULES, microBatch } from './filters';
import { trackCall } from './payloads';

const compiled = compileFilters(FILTER_RULES as unknown as FilterRule[]);

describe('FILTER_RULES', () => {
  it('are ten rules the config check accepts, on every destination', () => {
    const destinations = benchDestinations(true);
    expect(destinations).toHaveLength(10);
    for (const d of destinations) expect(d.filters).toHaveLength(10);
    expect(benchDestinations(false).every((d) => d.filters === undefined)).toBe(true);
  });

  it('send the pipeline phases’ calls and the micro batch’s, and read fields the route entry lacks', () => {
    expect(compiled.decide(trackCall('m-1', new Date().toISOString()))).toEqual({ send: true });
    for (const call of microBatch(40, 20).whole) expect(compiled.decide(call)).toEqual({ send: true });
    expect(compiled.roots.has('properties')).toBe(true);
  });

  it('drop a call they are meant to drop', () => {
    expect(compiled.decide({ ...trackCall('m-2', new Date().toISOString()), event: 'Test Order' })).toMatchObject({ send: false, rule: 0 });
  });

  it('take the client IP out and keep the properties (the receiver reads sentAtMs there)', () => {
    const shaped = compiled.shape(trackCall('m-3', new Date().toISOString())) as { context: Record<string, unknown>; properties: object };
    expect(shaped.context['ip']).toBeUndefined();
    expect(shaped.context['library']).toEqual({ name: 'analytics-node', version: '6.2.0' });
    expect(shaped.properties).toHaveProperty('total', 129.95);
  });
});
