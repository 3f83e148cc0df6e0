/**
 * What the chaos receiver does with a request, as pure data and functions (no I/O): the plan and
 * its validation, the `/chaos/<spec>/…` path form, which behaviour a path gets, the action a
 * uniform draw picks, and the seeded PRNG that makes the draws reproducible.
 */
import { seededRandom } from '../../test/support/seeded-random.js';

/** How a route answers. Shares are probabilities in [0, 1]; their sum is at most 1, the rest is 2xx. */
export interface Behaviour {
  /** Share of requests answered 500. */
  fail500?: number;
  /** Share answered 429 with Retry-After. */
  fail429?: number;
  /** Retry-After seconds on 429 (default 1). */
  retryAfterS?: number;
  /** Share never answered: the socket is held open until the client gives up. */
  hang?: number;
  /** Share whose socket is destroyed without any answer. */
  reset?: number;
  /** Share answered 302 with Location. */
  redirect?: number;
  /** Redirect target; default the cloud metadata address, which a webhook sender must never follow to. */
  location?: string;
  /** For 2xx answers: send headers at once, then dribble the body over this many ms. */
  slowBodyMs?: number;
  /** Wait this long before answering (any answer). */
  delayMs?: number;
}

export interface ChaosPlan {
  /** Key = first path segment ("d3" for "/d3/hook"); "*" = default for unknown segments. */
  routes: Record<string, Behaviour>;
  /** PRNG seed (default 1), so runs are reproducible. */
  seed?: number;
}

export type Action =
  | { kind: 'ok' }
  | { kind: 'status'; status: 500 }
  | { kind: 'status'; status: 429; retryAfterS: number }
  | { kind: 'hang' }
  | { kind: 'reset' }
  | { kind: 'redirect'; location: string };

export const DEFAULT_LOCATION = 'http://169.254.169.254/latest/meta-data/';
export const DEFAULT_RETRY_AFTER_S = 1;
export const DEFAULT_SEED = 1;
/** The first path segment that introduces the path form. */
export const CHAOS_SEGMENT = 'chaos';

/** In chooseAction's order. */
const SHARES = ['fail500', 'fail429', 'hang', 'reset', 'redirect'] as const;
const MS_FIELDS = ['slowBodyMs', 'delayMs'] as const;
const FIELDS: readonly string[] = [...SHARES, 'retryAfterS', 'location', ...MS_FIELDS];
/** Longer than any client timeout worth testing; keeps a typo from parking sockets for hours. */
const MAX_MS = 600_000;
const MAX_RETRY_AFTER_S = 86_400;
/** Float sums of shares such as 0.7 + 0.2 + 0.1 land a hair above 1. */
const SUM_SLACK = 1e-9;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Validates one behaviour; `where` prefixes field names in errors ("routes.d3."). */
function parseBehaviour(value: unknown, where: string): Behaviour {
  if (!isRecord(value)) throw new Error(`${where.slice(0, -1) || 'behaviour'} must be an object`);
  const out: Behaviour = {};
  for (const [key, v] of Object.entries(value)) {
    if (!FIELDS.includes(key)) throw new Error(`${where}${key} is not a known field (known: ${FIELDS.join(', ')})`);
    if (v === undefined) continue;
    if ((SHARES as readonly string[]).includes(key)) {
      if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw new Error(`${where}${key} must be a number between 0 and 1`);
      out[key as (typeof SHARES)[number]] = v;
    } else if ((MS_FIELDS as readonly string[]).includes(key)) {
      if (typeof v !== 'number' || !(v >= 0 && v <= MAX_MS))
        throw new Error(`${where}${key} must be a number of milliseconds between 0 and ${MAX_MS}`);
      out[key as (typeof MS_FIELDS)[number]] = v;
    } else if (key === 'retryAfterS') {
      // Retry-After's delay-seconds form is a whole number (RFC 9110 section 10.2.3).
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_RETRY_AFTER_S)
        throw new Error(`${where}retryAfterS must be a whole number of seconds between 0 and ${MAX_RETRY_AFTER_S}`);
      out.retryAfterS = v;
    } else {
      // A line break would make writeHead throw mid-request; refuse it up front.
      if (typeof v !== 'string' || v === '' || /[\r\n]/.test(v))
        throw new Error(`${where}location must be a non-empty string without line breaks`);
      out.location = v;
    }
  }
  let sum = 0;
  for (const s of SHARES) sum += out[s] ?? 0;
  if (sum > 1 + SUM_SLACK)
    throw new Error(
      `${where === '' ? '' : `${where.slice(0, -1)}: `}the shares ${SHARES.join(' + ')} add up to ${Math.round(sum * 1e6) / 1e6}, more than 1`,
    );
  return out;
}

/** Validates a plan (parsed JSON); errors name the field, as in "routes.d3.fail500 must be …". */
export function parsePlan(json: unknown): ChaosPlan {
  if (!isRecord(json)) throw new Error('plan must be an object with "routes" (and optionally "seed")');
  for (const key of Object.keys(json))
    if (key !== 'routes' && key !== 'seed') throw new Error(`plan.${key} is not a known field (known: routes, seed)`);
  const { routes, seed } = json;
  if (!isRecord(routes)) throw new Error('routes must be an object of route name → behaviour');
  // Null prototype: a route named "constructor" or "__proto__" is data, not an inherited member.
  const out = Object.create(null) as Record<string, Behaviour>;
  for (const [name, behaviour] of Object.entries(routes)) {
    if (name === '' || name.includes('/') || name.includes('?'))
      throw new Error(`routes: "${name}" is not a path segment (a route is the first segment of the path, or "*")`);
    if (name === CHAOS_SEGMENT) throw new Error(`routes.${CHAOS_SEGMENT} is reserved for the path form /${CHAOS_SEGMENT}/<spec>/…`);
    out[name] = parseBehaviour(behaviour, `routes.${name}.`);
  }
  if (seed === undefined) return { routes: out };
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new Error('seed must be an integer between 0 and 4294967295');
  return { routes: out, seed };
}

/**
 * The path form: "fail500=0.1,fail429=0.02,retryAfterS=1" (values URI-decoded, so a location can
 * be given as location=http%3A%2F%2F…). An empty spec means "always 2xx".
 */
export function parsePathBehaviour(segment: string): Behaviour {
  const fields: Record<string, unknown> = {};
  try {
    if (segment === '') return {};
    for (const part of segment.split(',')) {
      const eq = part.indexOf('=');
      if (eq <= 0) throw new Error(`"${part}" is not field=value`);
      const key = part.slice(0, eq);
      const raw = part.slice(eq + 1);
      if (Object.hasOwn(fields, key)) throw new Error(`${key} is given twice`);
      if (key === 'location') {
        try {
          fields[key] = decodeURIComponent(raw);
        } catch {
          throw new Error('location is not valid percent-encoding');
        }
      } else {
        // Number('') is 0: an empty value must not pass as zero.
        fields[key] = raw.trim() === '' ? raw : Number(raw);
      }
    }
    return parseBehaviour(fields, '');
  } catch (err) {
    throw new Error(`chaos path "${segment}": ${(err as Error).message}`, { cause: err });
  }
}

const EMPTY: Behaviour = Object.freeze({});

/**
 * The route of a request path (its first segment, or "chaos/<spec>" for the path form) and the
 * behaviour it gets: the path form's own, else the plan's route, else the plan's "*", else always
 * 2xx. Throws (with parsePathBehaviour's message) for a malformed path form.
 */
export function behaviourFor(plan: ChaosPlan, pathname: string): { route: string; behaviour: Behaviour } {
  const q = pathname.indexOf('?');
  const path = q === -1 ? pathname : pathname.slice(0, q);
  const start = path.startsWith('/') ? 1 : 0;
  const end = path.indexOf('/', start);
  const segment = end === -1 ? path.slice(start) : path.slice(start, end);
  if (segment === CHAOS_SEGMENT) {
    const specEnd = end === -1 ? -1 : path.indexOf('/', end + 1);
    const spec = end === -1 ? '' : specEnd === -1 ? path.slice(end + 1) : path.slice(end + 1, specEnd);
    return { route: `${CHAOS_SEGMENT}/${spec}`, behaviour: parsePathBehaviour(spec) };
  }
  const routes = plan.routes;
  const behaviour = Object.hasOwn(routes, segment) ? routes[segment] : Object.hasOwn(routes, '*') ? routes['*'] : undefined;
  return { route: segment, behaviour: behaviour ?? EMPTY };
}

// Shared answers: the hot path picks one per request without allocating.
const OK: Action = Object.freeze({ kind: 'ok' });
const FAIL_500: Action = Object.freeze({ kind: 'status', status: 500 });
const HANG: Action = Object.freeze({ kind: 'hang' });
const RESET: Action = Object.freeze({ kind: 'reset' });

/** Picks the action for a uniform draw r in [0, 1): cumulative shares fail500, fail429, hang, reset, redirect, then ok. */
export function chooseAction(behaviour: Behaviour, r: number): Action {
  let edge = behaviour.fail500 ?? 0;
  if (r < edge) return FAIL_500;
  edge += behaviour.fail429 ?? 0;
  if (r < edge) return { kind: 'status', status: 429, retryAfterS: behaviour.retryAfterS ?? DEFAULT_RETRY_AFTER_S };
  edge += behaviour.hang ?? 0;
  if (r < edge) return HANG;
  edge += behaviour.reset ?? 0;
  if (r < edge) return RESET;
  edge += behaviour.redirect ?? 0;
  if (r < edge) return { kind: 'redirect', location: behaviour.location ?? DEFAULT_LOCATION };
  return OK;
}

/**
 * One stream per route, seeded from the plan's seed and the route name (FNV-1a): a route's draws
 * depend only on how many requests that route got, not on how other routes' requests interleave
 * with them, so a multi-destination run repeats per destination.
 */
export function routeRandom(seed: number, route: string): () => number {
  let h = 0x811c9dc5;
  for (let i = 0; i < route.length; i++) h = Math.imul(h ^ route.charCodeAt(i), 0x01000193);
  return seededRandom((h ^ seed) >>> 0);
}
