/**
 * Checks an audience condition typed as JSON before it is sent, with the path of each problem, so
 * the editor can point at the mistake while the user types. It follows
 * audience-condition.schema.json; the API checks again on create.
 */
interface ConditionProblem {
  readonly path: string;
  readonly message: string;
}

const TRAIT_OPERATORS = ['equals', 'not_equals', 'exists', 'contains', 'gt', 'gte', 'lt', 'lte'] as const;
const NODE_KEYS = ['all', 'any', 'not', 'trait', 'event'] as const;
const MAX_CHILDREN = 50;

export type ParsedCondition = { ok: true; condition: object } | { ok: false; problems: ConditionProblem[] };

export function parseCondition(text: string): ParsedCondition {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, problems: [{ path: '', message: `not valid JSON: ${(err as Error).message}` }] };
  }
  const problems = conditionProblems(value, 'condition');
  return problems.length === 0 ? { ok: true, condition: value as object } : { ok: false, problems };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function conditionProblems(node: unknown, path: string): ConditionProblem[] {
  if (!isObject(node)) return [{ path, message: 'must be an object with one of all, any, not, trait, event' }];
  const keys = Object.keys(node);
  if (keys.length !== 1) return [{ path, message: `must have exactly one key of ${NODE_KEYS.join(', ')}; has ${keys.length}` }];
  const key = keys[0]!;
  const value = node[key];
  const at = `${path}.${key}`;
  switch (key) {
    case 'all':
    case 'any':
      if (!Array.isArray(value) || value.length === 0) return [{ path: at, message: 'must be a list of at least one condition' }];
      if (value.length > MAX_CHILDREN) return [{ path: at, message: `must hold at most ${MAX_CHILDREN} conditions` }];
      return value.flatMap((child, i) => conditionProblems(child, `${at}[${i}]`));
    case 'not':
      return conditionProblems(value, at);
    case 'trait':
      return traitProblems(value, at);
    case 'event':
      return eventProblems(value, at);
    default:
      return [{ path, message: `unknown key "${key}": use one of ${NODE_KEYS.join(', ')}` }];
  }
}

function traitProblems(test: unknown, path: string): ConditionProblem[] {
  if (!isObject(test)) return [{ path, message: 'must be an object {key, <operator>}' }];
  const problems: ConditionProblem[] = [];
  if (typeof test['key'] !== 'string' || test['key'].length === 0 || test['key'].length > 200)
    problems.push({ path: `${path}.key`, message: 'must be a trait name of 1 to 200 characters' });
  const ops = Object.keys(test).filter((k) => k !== 'key');
  const unknown = ops.filter((k) => !(TRAIT_OPERATORS as readonly string[]).includes(k));
  if (unknown.length > 0)
    problems.push({ path, message: `unknown operator ${unknown.join(', ')}: use one of ${TRAIT_OPERATORS.join(', ')}` });
  else if (ops.length !== 1) problems.push({ path, message: `must have exactly one operator of ${TRAIT_OPERATORS.join(', ')}` });
  else {
    const op = ops[0]!;
    const v = test[op];
    const scalar = v === null || ['string', 'number', 'boolean'].includes(typeof v);
    if ((op === 'equals' || op === 'not_equals') && !scalar)
      problems.push({ path: `${path}.${op}`, message: 'must be a string, number, boolean or null' });
    if (op === 'exists' && typeof v !== 'boolean') problems.push({ path: `${path}.exists`, message: 'must be true or false' });
    if (op === 'contains' && !['string', 'number', 'boolean'].includes(typeof v))
      problems.push({ path: `${path}.contains`, message: 'must be a string, number or boolean' });
    if (['gt', 'gte', 'lt', 'lte'].includes(op) && typeof v !== 'string' && typeof v !== 'number')
      problems.push({ path: `${path}.${op}`, message: 'must be a number or a string' });
  }
  return problems;
}

function eventProblems(test: unknown, path: string): ConditionProblem[] {
  if (!isObject(test)) return [{ path, message: 'must be an object {name, atLeast?, withinDays?}' }];
  const problems: ConditionProblem[] = [];
  if (typeof test['name'] !== 'string' || test['name'].length === 0 || test['name'].length > 200)
    problems.push({ path: `${path}.name`, message: 'must be an event name of 1 to 200 characters' });
  const int = (k: string, max: number) => {
    const v = test[k];
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max))
      problems.push({ path: `${path}.${k}`, message: `must be a whole number from 1 to ${max}` });
  };
  int('atLeast', 1_000_000);
  int('withinDays', 90);
  for (const k of Object.keys(test))
    if (!['name', 'atLeast', 'withinDays'].includes(k)) problems.push({ path: `${path}.${k}`, message: 'is not a field of an event test' });
  return problems;
}

export const EXAMPLE_CONDITION = JSON.stringify(
  { all: [{ trait: { key: 'plan', equals: 'pro' } }, { event: { name: 'Signed In', atLeast: 3, withinDays: 30 } }] },
  null,
  2,
);
