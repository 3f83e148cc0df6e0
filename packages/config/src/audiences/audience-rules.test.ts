import type { Audience, AudienceCondition, AudienceCreate } from '../generated/contracts.js';
import { adminBodyValidator, schemaProblems } from '../schemas.js';
import { MAX_CONDITION_DEPTH, audienceProblems, type AudienceWorld } from './audience-rules.js';
import { audienceFingerprint } from './fingerprint.js';

const plan = (value: string): AudienceCondition => ({ trait: { key: 'plan', equals: value } });
const audience = (extra: Partial<Audience> = {}): Audience => ({
  id: 'trial',
  name: 'Trial Users',
  sourceIds: ['web', 'api'],
  destinationIds: ['hooks'],
  condition: plan('trial'),
  ...extra,
});
const world = (others: Audience[] = []): AudienceWorld => ({
  sourceIds: new Set(['web', 'api']),
  destinationIds: new Set(['hooks', 'crm']),
  others,
});

/** `levels` conditions in a chain of `not`s, the innermost a trait test. */
function nested(levels: number): AudienceCondition {
  let c = plan('trial');
  for (let i = 1; i < levels; i++) c = { not: c };
  return c;
}

describe('audienceProblems', () => {
  it('finds nothing wrong with a valid audience', () => {
    expect(audienceProblems(audience(), world([audience({ id: 'paying', name: 'Paying Users' })]))).toEqual([]);
  });

  it.each(['!!!', '___', ' - '])('refuses the name %j, which gives no trait key', (name) => {
    expect(audienceProblems(audience({ name }), world())).toEqual([{ field: 'name', message: expect.stringContaining('letter or digit') }]);
  });

  it('refuses a name whose trait key another audience already has, naming that audience', () => {
    const problems = audienceProblems(audience({ name: 'trial-users' }), world([audience({ id: 'older', name: 'Trial Users' })]));
    expect(problems).toEqual([{ field: 'name', message: 'gives the trait "trial_users", which audience "older" already sends' }]);
  });

  it('names each unknown source and destination by its index', () => {
    const problems = audienceProblems(audience({ sourceIds: ['web', 'ghost'], destinationIds: ['gone', 'hooks', 'crm'] }), world());
    expect(problems).toEqual([
      { field: 'sourceIds[1]', message: 'names no source ("ghost")' },
      { field: 'destinationIds[0]', message: 'names no destination ("gone")' },
    ]);
  });

  it(`accepts ${MAX_CONDITION_DEPTH} levels of nesting and refuses one more at the field that goes too deep`, () => {
    expect(audienceProblems(audience({ condition: nested(MAX_CONDITION_DEPTH) }), world())).toEqual([]);
    const problems = audienceProblems(audience({ condition: nested(MAX_CONDITION_DEPTH + 1) }), world());
    expect(problems).toEqual([
      { field: `condition${'.not'.repeat(MAX_CONDITION_DEPTH)}`, message: `nests deeper than ${MAX_CONDITION_DEPTH} levels` },
    ]);
  });

  it('gives the path through all and any with indexes', () => {
    const condition: AudienceCondition = { all: [plan('a'), { any: [plan('b'), nested(MAX_CONDITION_DEPTH - 1)] }] };
    expect(audienceProblems(audience({ condition }), world())).toEqual([
      {
        field: `condition.all[1].any[1]${'.not'.repeat(MAX_CONDITION_DEPTH - 2)}`,
        message: `nests deeper than ${MAX_CONDITION_DEPTH} levels`,
      },
    ]);
  });
});

describe('AudienceCreate schema problems', () => {
  const validate = adminBodyValidator<AudienceCreate>('AudienceCreate');
  const body = (extra: Record<string, unknown>) => ({
    name: 'Trial Users',
    sourceIds: ['web'],
    destinationIds: [],
    condition: plan('trial'),
    ...extra,
  });
  const problemsOf = (value: unknown) => (validate(value) ? [] : schemaProblems(validate.errors));

  const oneOfNode = 'must have exactly one of all, any, not, trait, event';
  const oneOperator = 'must have key and exactly one of equals, not_equals, exists, contains, gt, gte, lt, lte';

  it('accepts a valid body', () => {
    expect(
      problemsOf(
        body({ condition: { all: [plan('trial'), { not: { event: { name: 'Order Completed', atLeast: 2, withinDays: 90 } } }] } }),
      ),
    ).toEqual([]);
  });

  it.each<[string, unknown, { field: string; message: string }[]]>([
    ['an empty condition', {}, [{ field: 'condition', message: oneOfNode }]],
    [
      'a condition with two keys',
      { trait: { key: 'plan', exists: true }, event: { name: 'Signed Up' } },
      [{ field: 'condition', message: oneOfNode }],
    ],
    ['an empty nested condition', { any: [plan('a'), {}] }, [{ field: 'condition.any[1]', message: oneOfNode }]],
    [
      'a trait test with two operators',
      { trait: { key: 'plan', equals: 'trial', exists: true } },
      [{ field: 'condition.trait', message: oneOperator }],
    ],
    ['a trait test without an operator', { not: { trait: { key: 'plan' } } }, [{ field: 'condition.not.trait', message: oneOperator }]],
    ['an unknown operator', { trait: { key: 'plan', like: 'tri%' } }, [{ field: 'condition.trait.like', message: 'is not a known field' }]],
    ['event.atLeast 0', { event: { name: 'Signed Up', atLeast: 0 } }, [{ field: 'condition.event.atLeast', message: 'must be >= 1' }]],
    [
      'event.withinDays 91',
      { event: { name: 'Signed Up', withinDays: 91 } },
      [{ field: 'condition.event.withinDays', message: 'must be <= 90' }],
    ],
  ])('refuses %s, naming the field', (_what, condition, expected) => {
    expect(problemsOf(body({ condition }))).toEqual(expected);
  });

  it('refuses an audience with no source', () => {
    expect(problemsOf(body({ sourceIds: [] }))).toEqual([{ field: 'sourceIds', message: 'must NOT have fewer than 1 items' }]);
  });
});

describe('audienceFingerprint', () => {
  const base = audience();

  it('is a short stable digest', () => {
    expect(audienceFingerprint(base)).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(audienceFingerprint(base)).toBe(audienceFingerprint(audience()));
  });

  it('does not depend on the order of sourceIds, the name or the destinations', () => {
    expect(audienceFingerprint({ ...base, sourceIds: ['api', 'web'] })).toBe(audienceFingerprint(base));
    expect(audienceFingerprint(audience({ name: 'Renamed' }))).toBe(audienceFingerprint(base));
    expect(audienceFingerprint(audience({ destinationIds: [] }))).toBe(audienceFingerprint(base));
  });

  it('changes with the condition and with the set of sources', () => {
    expect(audienceFingerprint({ ...base, condition: plan('paying') })).not.toBe(audienceFingerprint(base));
    expect(audienceFingerprint({ ...base, condition: { not: base.condition } })).not.toBe(audienceFingerprint(base));
    expect(audienceFingerprint({ ...base, sourceIds: ['web'] })).not.toBe(audienceFingerprint(base));
  });

  it('does not modify the audience', () => {
    const a = audience({ sourceIds: ['web', 'api'] });
    audienceFingerprint(a);
    expect(a.sourceIds).toEqual(['web', 'api']);
  });
});
