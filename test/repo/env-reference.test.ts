/**
 * docs/reference/env.md is generated from the env specs (`pnpm gen:docs`). This regenerates it in
 * memory, the way scripts/gen-docs.mjs does, and fails naming each variable whose committed row is
 * missing, stale or left over: a variable added to a spec without regenerating fails here.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { envReferenceDrift, renderEnvReference, type ServiceEnv } from '../../packages/config/src/env-reference';

const ROOT = path.resolve(__dirname, '../..');
const DOC = path.join(ROOT, 'docs/reference/env.md');

/** Every services/<name>/src/env.ts with the one `*EnvSpec` it exports (as the script finds them). */
function serviceEnvs(): ServiceEnv[] {
  return readdirSync(path.join(ROOT, 'services'))
    .sort()
    .filter((name) => existsSync(path.join(ROOT, 'services', name, 'src', 'env.ts')))
    .map((name) => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- each service's spec, found by folder
      const module = require(path.join(ROOT, 'services', name, 'src', 'env.ts')) as Record<string, unknown>;
      const specs = Object.entries(module).filter(([key]) => key.endsWith('EnvSpec'));
      expect(specs.map(([key]) => key)).toHaveLength(1);
      return { name, spec: specs[0]![1] as ServiceEnv['spec'] };
    });
}

describe('docs/reference/env.md', () => {
  const services = serviceEnvs();

  it('finds the spec of every service', () => {
    const packages = readdirSync(path.join(ROOT, 'services')).filter((name) =>
      existsSync(path.join(ROOT, 'services', name, 'package.json')),
    );
    expect(packages.length).toBeGreaterThanOrEqual(5);
    expect(services.map((s) => s.name)).toEqual(packages.sort());
  });

  it('is what the env specs generate (run pnpm gen:docs after changing a spec)', () => {
    const committed = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
    expect(envReferenceDrift(committed, renderEnvReference(services))).toEqual([]);
  });

  it('describes every variable in one line', () => {
    for (const { spec } of services) {
      for (const [name, variable] of Object.entries(spec)) {
        expect(`${name}: ${variable.describe}`).toMatch(new RegExp(`^${name}: \\S.{9,}$`));
        expect(variable.doc.type.trim()).not.toBe('');
      }
    }
  });
});
