import { MAX_BODY_DEPTH, bodyDepthProblem } from './json-depth.js';

/** `levels` objects and arrays inside one another, alternating, with a scalar at the bottom. */
function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 1; i <= levels; i++) value = i % 2 === 0 ? [value] : { k: value };
  return value;
}

describe('bodyDepthProblem', () => {
  it('takes a body exactly at the limit and refuses one level more, naming the limit', () => {
    expect(bodyDepthProblem(nested(MAX_BODY_DEPTH))).toBeUndefined();
    expect(bodyDepthProblem(nested(MAX_BODY_DEPTH + 1))).toEqual({
      field: '(body)',
      message: `nests objects and arrays deeper than ${MAX_BODY_DEPTH} levels`,
    });
  });

  it('counts scalars and empty containers as they are: a flat body is level 1', () => {
    expect(bodyDepthProblem({ a: 1, b: 'x', c: null }, 1)).toBeUndefined();
    expect(bodyDepthProblem({ a: {} }, 1)).toBeDefined();
    expect(bodyDepthProblem('text', 0)).toBeUndefined();
  });

  it('finds the deep branch among wide shallow ones', () => {
    const wide = Array.from({ length: 10_000 }, () => ({ x: [1, 2] }));
    expect(bodyDepthProblem({ wide, deep: nested(10) }, 11)).toBeUndefined();
    expect(bodyDepthProblem({ wide, deep: nested(11) }, 11)).toBeDefined();
  });

  it('walks a body far deeper than the stack allows without overflowing', () => {
    expect(bodyDepthProblem(nested(200_000))?.message).toContain(String(MAX_BODY_DEPTH));
  });
});
