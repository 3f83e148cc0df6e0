import { commonEnv, custom, integer, oneOf, port, required, text } from './env.js';
import { envReferenceDrift, renderEnvReference } from './env-reference.js';

const spec = {
  ...commonEnv,
  DEMO_PORT: port({ default: 9100, describe: 'port of the ops endpoints' }),
  DEMO_WINDOW_MS: integer({ default: 14_400_000, min: 1000, max: 86_400_000, describe: 'how long | it waits' }),
  DEMO_WINDOW_S: integer({ default: 86_400, min: 0, max: 864_000, describe: 'one day' }),
  DEMO_MODE: oneOf(['a', 'b'], { default: 'a', describe: 'which mode' }),
  DEMO_TOKEN: custom({ describe: 'the token', type: 'a token', required: true, secret: true, parse: (raw) => raw ?? '' }),
  DEMO_NAME: required(text({ describe: 'a name that must be set' })),
  DEMO_LABEL: required(text({ default: 'x', describe: 'a name with a default' })),
};
const rowOf = (markdown: string, name: string) => markdown.split('\n').find((l) => l.startsWith(`| \`${name}\``));

describe('renderEnvReference', () => {
  const doc = renderEnvReference([{ name: 'demo', spec }]);

  it('puts the shared variables in one table and only its own in the service table', () => {
    const sections = doc.split('\n## ');
    expect(sections[1]).toContain('`REDIS_URL`');
    expect(sections[2]!.startsWith('demo\n')).toBe(true);
    expect(sections[2]).not.toContain('`REDIS_URL`');
    expect(sections[2]).toContain('`DEMO_PORT`');
  });

  it('gives default, whether required, values and description, readable durations and escaped pipes', () => {
    expect(rowOf(doc, 'DEMO_PORT')).toBe(
      '| `DEMO_PORT` | `9100` | no | port, 0 to 65535 (0 picks a free one) | port of the ops endpoints |',
    );
    expect(rowOf(doc, 'DEMO_WINDOW_MS')).toBe(
      '| `DEMO_WINDOW_MS` | `14400000` (4 h) | no | integer, 1,000 to 86,400,000 | how long \\| it waits |',
    );
    expect(rowOf(doc, 'DEMO_WINDOW_S')).toBe('| `DEMO_WINDOW_S` | `86400` (1 day) | no | integer, 0 to 864,000 | one day |');
    expect(rowOf(doc, 'DEMO_MODE')).toBe('| `DEMO_MODE` | `a` | no | one of a, b | which mode |');
    expect(rowOf(doc, 'DEMO_TOKEN')).toBe('| `DEMO_TOKEN` (secret) | — | **yes** | a token | the token |');
    expect(rowOf(doc, 'DEMO_NAME')).toBe('| `DEMO_NAME` | — | **yes** | text | a name that must be set |');
    expect(rowOf(doc, 'DEMO_LABEL')).toBe('| `DEMO_LABEL` | `x` | no | text | a name with a default |');
  });

  it('lists a service table when a service redefines a shared variable', () => {
    const redefined = renderEnvReference([
      { name: 'demo', spec: { ...spec, LOG_LEVEL: oneOf(['info'], { default: 'info', describe: 'only info' }) } },
    ]);
    expect(redefined.split('\n## ')[2]).toContain('| `LOG_LEVEL` | `info` | no | one of info | only info |');
  });
});

describe('envReferenceDrift', () => {
  const doc = renderEnvReference([{ name: 'demo', spec }]);

  it('is empty when nothing changed', () => {
    expect(envReferenceDrift(doc, doc)).toEqual([]);
  });

  it('names a variable added to a spec, one removed and one whose description changed', () => {
    const { DEMO_MODE: _removed, ...rest } = spec;
    const changed = renderEnvReference([
      {
        name: 'demo',
        spec: {
          ...rest,
          DEMO_NAME: required(text({ describe: 'reworded' })),
          DEMO_NEW: integer({ default: 1, min: 0, max: 2, describe: 'new one' }),
        },
      },
    ]);
    const drift = envReferenceDrift(doc, changed);
    expect(drift).toHaveLength(3);
    expect(drift[0]).toMatch(
      /^demo\/DEMO_NAME: the committed row differs from the spec\n {2}committed: .*a name that must be set \|\n {2}spec: .*reworded \|$/,
    );
    expect(drift[1]).toBe('demo/DEMO_NEW: in the spec, missing from the committed reference');
    expect(drift[2]).toBe('demo/DEMO_MODE: in the committed reference, in no spec');
  });

  it('reports a change outside the tables', () => {
    expect(envReferenceDrift(doc.replace('# Environment variables', '# Env'), doc)).toEqual([
      'the text around the tables differs from what the generator writes',
    ]);
  });
});
