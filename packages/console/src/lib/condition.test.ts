import { EXAMPLE_CONDITION, parseCondition } from './condition';

const problems = (text: string) => {
  const parsed = parseCondition(text);
  return parsed.ok ? [] : parsed.problems;
};

describe('audience condition check', () => {
  it('accepts the example and nested all / any / not trees', () => {
    expect(parseCondition(EXAMPLE_CONDITION).ok).toBe(true);
    expect(problems('{"any":[{"not":{"trait":{"key":"a","exists":true}}},{"trait":{"key":"n","gte":3}}]}')).toEqual([]);
  });

  it('reports JSON syntax errors', () => {
    expect(problems('{"all": [')[0]).toMatchObject({ path: '', message: expect.stringMatching(/^not valid JSON/) });
  });

  it('points at each problem by its path', () => {
    expect(problems('{"all":[{"trait":{"key":"plan"}},{"event":{"name":"","withinDays":91}},{"tag":1}]}')).toEqual([
      { path: 'condition.all[0].trait', message: expect.stringContaining('exactly one operator') },
      { path: 'condition.all[1].event.name', message: expect.stringContaining('event name') },
      { path: 'condition.all[1].event.withinDays', message: 'must be a whole number from 1 to 90' },
      { path: 'condition.all[2]', message: expect.stringContaining('unknown key "tag"') },
    ]);
  });

  it('refuses empty lists, two keys in a node and wrong operand types', () => {
    expect(problems('{"all":[]}')[0]?.message).toBe('must be a list of at least one condition');
    expect(problems('{"all":[{"trait":{"key":"a","exists":true}}],"any":[]}')[0]?.message).toMatch(/exactly one key/);
    expect(problems('{"trait":{"key":"a","gt":true}}')).toEqual([{ path: 'condition.trait.gt', message: 'must be a number or a string' }]);
    expect(problems('{"trait":{"key":"a","exists":"yes"}}')).toEqual([
      { path: 'condition.trait.exists', message: 'must be true or false' },
    ]);
    expect(problems('[]')[0]?.path).toBe('condition');
  });
});
