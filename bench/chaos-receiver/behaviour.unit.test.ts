/**
 * The chaos receiver's pure rules: plan and path-form validation (each error names its field),
 * routing by first path segment, action boundaries, and reproducible random streams.
 */
import { behaviourFor, chooseAction, DEFAULT_LOCATION, parsePathBehaviour, parsePlan, routeRandom, type ChaosPlan } from './behaviour';
import { thrown } from '../../test/support/thrown';

const errorOf = (f: () => unknown): string => thrown(Error, f).message;

describe('parsePlan', () => {
  it('accepts a full plan and keeps every field', () => {
    const plan = parsePlan({
      seed: 42,
      routes: {
        d0: {},
        d1: {
          fail500: 0.1,
          fail429: 0.02,
          retryAfterS: 3,
          hang: 0.1,
          reset: 0.1,
          redirect: 0.1,
          location: 'http://10.0.0.1/',
          slowBodyMs: 800,
          delayMs: 50,
        },
        '*': { fail500: 1 },
      },
    });
    expect(plan.seed).toBe(42);
    expect(Object.keys(plan.routes).sort()).toEqual(['*', 'd0', 'd1']);
    expect(plan.routes['d1']).toEqual({
      fail500: 0.1,
      fail429: 0.02,
      retryAfterS: 3,
      hang: 0.1,
      reset: 0.1,
      redirect: 0.1,
      location: 'http://10.0.0.1/',
      slowBodyMs: 800,
      delayMs: 50,
    });
  });

  it('leaves the seed out when absent', () => {
    expect(parsePlan({ routes: {} })).toEqual({ routes: {} });
  });

  it.each<[string, unknown, string]>([
    ['not an object', [], 'plan must be an object with "routes" (and optionally "seed")'],
    ['null', null, 'plan must be an object with "routes" (and optionally "seed")'],
    ['unknown top-level key', { routes: {}, rutes: {} }, 'plan.rutes is not a known field (known: routes, seed)'],
    ['routes missing', {}, 'routes must be an object of route name → behaviour'],
    ['routes an array', { routes: [] }, 'routes must be an object of route name → behaviour'],
    ['behaviour not an object', { routes: { d3: 0.5 } }, 'routes.d3 must be an object'],
    ['share above 1', { routes: { d3: { fail500: 1.5 } } }, 'routes.d3.fail500 must be a number between 0 and 1'],
    ['share negative', { routes: { d3: { hang: -0.1 } } }, 'routes.d3.hang must be a number between 0 and 1'],
    ['share a string', { routes: { d3: { fail429: '0.1' } } }, 'routes.d3.fail429 must be a number between 0 and 1'],
    ['reset share', { routes: { d3: { reset: 2 } } }, 'routes.d3.reset must be a number between 0 and 1'],
    ['redirect share', { routes: { d3: { redirect: null } } }, 'routes.d3.redirect must be a number between 0 and 1'],
    [
      'unknown behaviour key',
      { routes: { d3: { fail503: 0.1 } } },
      'routes.d3.fail503 is not a known field (known: fail500, fail429, hang, reset, redirect, retryAfterS, location, slowBodyMs, delayMs)',
    ],
    [
      'shares over 1',
      { routes: { d3: { fail500: 0.6, fail429: 0.3, hang: 0.2 } } },
      'routes.d3: the shares fail500 + fail429 + hang + reset + redirect add up to 1.1, more than 1',
    ],
    [
      'fractional Retry-After',
      { routes: { d3: { retryAfterS: 1.5 } } },
      'routes.d3.retryAfterS must be a whole number of seconds between 0 and 86400',
    ],
    [
      'negative Retry-After',
      { routes: { d3: { retryAfterS: -1 } } },
      'routes.d3.retryAfterS must be a whole number of seconds between 0 and 86400',
    ],
    ['empty location', { routes: { d3: { location: '' } } }, 'routes.d3.location must be a non-empty string without line breaks'],
    [
      'location with a line break',
      { routes: { d3: { location: 'http://a/\r\nx-evil: 1' } } },
      'routes.d3.location must be a non-empty string without line breaks',
    ],
    ['negative delay', { routes: { d3: { delayMs: -5 } } }, 'routes.d3.delayMs must be a number of milliseconds between 0 and 600000'],
    [
      'slow body too long',
      { routes: { d3: { slowBodyMs: 600_001 } } },
      'routes.d3.slowBodyMs must be a number of milliseconds between 0 and 600000',
    ],
    [
      'route with a slash',
      { routes: { 'd3/hook': {} } },
      'routes: "d3/hook" is not a path segment (a route is the first segment of the path, or "*")',
    ],
    ['empty route name', { routes: { '': {} } }, 'routes: "" is not a path segment (a route is the first segment of the path, or "*")'],
    ['reserved route', { routes: { chaos: {} } }, 'routes.chaos is reserved for the path form /chaos/<spec>/…'],
    ['fractional seed', { routes: {}, seed: 1.5 }, 'seed must be an integer between 0 and 4294967295'],
    ['seed too large', { routes: {}, seed: 2 ** 32 }, 'seed must be an integer between 0 and 4294967295'],
  ])('rejects %s', (_label, json, message) => {
    expect(errorOf(() => parsePlan(json))).toBe(message);
  });

  it('accepts shares that add up to exactly 1 despite float rounding', () => {
    expect(parsePlan({ routes: { d: { fail500: 0.7, fail429: 0.2, hang: 0.1 } } }).routes['d']).toEqual({
      fail500: 0.7,
      fail429: 0.2,
      hang: 0.1,
    });
  });

  it('treats "__proto__" and "constructor" as route names, not object members', () => {
    const plan = parsePlan(JSON.parse('{"routes":{"__proto__":{"fail500":1},"constructor":{"hang":1}}}'));
    expect(behaviourFor(plan, '/__proto__/x').behaviour).toEqual({ fail500: 1 });
    expect(behaviourFor(plan, '/constructor').behaviour).toEqual({ hang: 1 });
    expect(behaviourFor(plan, '/toString').behaviour).toEqual({});
  });
});

describe('parsePathBehaviour', () => {
  it('reads numbers and a percent-encoded location', () => {
    expect(parsePathBehaviour('fail500=0.1,fail429=0.02,retryAfterS=1')).toEqual({ fail500: 0.1, fail429: 0.02, retryAfterS: 1 });
    expect(parsePathBehaviour(`redirect=1,location=${encodeURIComponent('http://10.1.2.3/x?y=1')}`)).toEqual({
      redirect: 1,
      location: 'http://10.1.2.3/x?y=1',
    });
    expect(parsePathBehaviour('slowBodyMs=800,delayMs=20')).toEqual({ slowBodyMs: 800, delayMs: 20 });
  });

  it('reads an empty spec as always 2xx', () => {
    expect(parsePathBehaviour('')).toEqual({});
  });

  it.each<[string, string]>([
    ['fail500=2', 'chaos path "fail500=2": fail500 must be a number between 0 and 1'],
    ['fail500=', 'chaos path "fail500=": fail500 must be a number between 0 and 1'],
    ['fail500=abc', 'chaos path "fail500=abc": fail500 must be a number between 0 and 1'],
    ['retryAfterS=0.5', 'chaos path "retryAfterS=0.5": retryAfterS must be a whole number of seconds between 0 and 86400'],
    [
      'bogus=1',
      'chaos path "bogus=1": bogus is not a known field (known: fail500, fail429, hang, reset, redirect, retryAfterS, location, slowBodyMs, delayMs)',
    ],
    ['fail500', 'chaos path "fail500": "fail500" is not field=value'],
    ['=1', 'chaos path "=1": "=1" is not field=value'],
    ['hang=0.5,hang=0.2', 'chaos path "hang=0.5,hang=0.2": hang is given twice'],
    [
      'hang=0.6,reset=0.6',
      'chaos path "hang=0.6,reset=0.6": the shares fail500 + fail429 + hang + reset + redirect add up to 1.2, more than 1',
    ],
    ['location=%E0%A4%A', 'chaos path "location=%E0%A4%A": location is not valid percent-encoding'],
  ])('rejects %s', (spec, message) => {
    expect(errorOf(() => parsePathBehaviour(spec))).toBe(message);
  });
});

describe('behaviourFor', () => {
  const plan: ChaosPlan = parsePlan({ routes: { d3: { fail500: 1 }, '*': { hang: 1 } } });
  const noDefault: ChaosPlan = parsePlan({ routes: { d3: { fail500: 1 } } });

  it('routes by the first path segment, ignoring the rest and the query', () => {
    expect(behaviourFor(plan, '/d3/hook')).toEqual({ route: 'd3', behaviour: { fail500: 1 } });
    expect(behaviourFor(plan, '/d3')).toEqual({ route: 'd3', behaviour: { fail500: 1 } });
    expect(behaviourFor(plan, '/d3?x=1')).toEqual({ route: 'd3', behaviour: { fail500: 1 } });
  });

  it('falls back to "*" for an unknown segment, keeping the segment as the route', () => {
    expect(behaviourFor(plan, '/d4/hook')).toEqual({ route: 'd4', behaviour: { hang: 1 } });
    expect(behaviourFor(plan, '/')).toEqual({ route: '', behaviour: { hang: 1 } });
  });

  it('answers 2xx for an unknown segment without "*"', () => {
    expect(behaviourFor(noDefault, '/d4/hook')).toEqual({ route: 'd4', behaviour: {} });
  });

  it('takes the path form over the plan, its route being "chaos/<spec>"', () => {
    expect(behaviourFor(plan, '/chaos/fail429=1,retryAfterS=2/anything/else')).toEqual({
      route: 'chaos/fail429=1,retryAfterS=2',
      behaviour: { fail429: 1, retryAfterS: 2 },
    });
    expect(behaviourFor(plan, '/chaos/reset=1')).toEqual({ route: 'chaos/reset=1', behaviour: { reset: 1 } });
    expect(behaviourFor(plan, '/chaos')).toEqual({ route: 'chaos/', behaviour: {} });
  });

  it('throws the path form error for a malformed spec', () => {
    expect(errorOf(() => behaviourFor(plan, '/chaos/fail500=7/x'))).toBe(
      'chaos path "fail500=7": fail500 must be a number between 0 and 1',
    );
  });
});

describe('chooseAction', () => {
  const b = { fail500: 0.1, fail429: 0.1, hang: 0.1, reset: 0.1, redirect: 0.1 };

  it('walks the cumulative shares in order, each edge belonging to the next bucket', () => {
    expect(chooseAction(b, 0)).toEqual({ kind: 'status', status: 500 });
    expect(chooseAction(b, 0.0999)).toEqual({ kind: 'status', status: 500 });
    expect(chooseAction(b, 0.1)).toEqual({ kind: 'status', status: 429, retryAfterS: 1 });
    expect(chooseAction(b, 0.1999)).toEqual({ kind: 'status', status: 429, retryAfterS: 1 });
    expect(chooseAction(b, 0.2)).toEqual({ kind: 'hang' });
    expect(chooseAction(b, 0.35)).toEqual({ kind: 'reset' });
    expect(chooseAction(b, 0.45)).toEqual({ kind: 'redirect', location: DEFAULT_LOCATION });
    expect(chooseAction(b, 0.5)).toEqual({ kind: 'ok' });
    expect(chooseAction(b, 0.9999)).toEqual({ kind: 'ok' });
  });

  it('uses the behaviour Retry-After and location', () => {
    expect(chooseAction({ fail429: 1, retryAfterS: 7 }, 0.5)).toEqual({ kind: 'status', status: 429, retryAfterS: 7 });
    expect(chooseAction({ redirect: 1, location: 'http://x/' }, 0.5)).toEqual({ kind: 'redirect', location: 'http://x/' });
  });

  it('with a share of 1 always picks it, with no shares always ok', () => {
    expect(chooseAction({ hang: 1 }, 0.999999)).toEqual({ kind: 'hang' });
    expect(chooseAction({ reset: 1 }, 0)).toEqual({ kind: 'reset' });
    expect(chooseAction({}, 0)).toEqual({ kind: 'ok' });
    expect(chooseAction({ fail500: 0 }, 0)).toEqual({ kind: 'ok' });
  });
});

describe('random streams', () => {
  const draws = (next: () => number, n: number) => Array.from({ length: n }, next);

  it('routeRandom repeats for a seed and route, differs between seeds and stays in [0, 1)', () => {
    const a = draws(routeRandom(1, 'd0'), 1000);
    expect(draws(routeRandom(1, 'd0'), 1000)).toEqual(a);
    expect(draws(routeRandom(2, 'd0'), 1000)).not.toEqual(a);
    expect(a.every((x) => x >= 0 && x < 1)).toBe(true);
    // Uniform enough for shares: the mean of 1000 draws is near 0.5.
    expect(Math.abs(a.reduce((s, x) => s + x, 0) / a.length - 0.5)).toBeLessThan(0.05);
  });

  it('gives each route its own stream, repeatable per seed and route', () => {
    const d0 = draws(routeRandom(8, 'd0'), 50);
    expect(draws(routeRandom(8, 'd0'), 50)).toEqual(d0);
    expect(draws(routeRandom(8, 'd1'), 50)).not.toEqual(d0);
    expect(draws(routeRandom(9, 'd0'), 50)).not.toEqual(d0);
  });

  it('a 0.5 share over 1000 draws lands near 500', () => {
    const next = routeRandom(1, 'd0');
    let fails = 0;
    for (let i = 0; i < 1000; i++) if (chooseAction({ fail500: 0.5 }, next()).kind === 'status') fails++;
    expect(fails).toBeGreaterThan(450);
    expect(fails).toBeLessThan(550);
  });
});
