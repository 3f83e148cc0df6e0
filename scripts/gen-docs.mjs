// Writes docs/reference/env.md, the tables of environment variables, from the env specs:
// packages/config/src/env.ts (every service) and the spec each services/<name>/src/env.ts exports
// as `<name>EnvSpec`. Run as `pnpm gen:docs`; with --check it writes nothing and exits 1 when the
// committed file is stale, naming each variable (test/repo/env-reference.test.ts checks the same).
// tsx runs it with scripts/tsconfig.gen-docs.json, which maps the workspace packages to their
// sources, so nothing needs building first and nothing is started.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { envReferenceDrift, renderEnvReference } from '../packages/config/src/env-reference.ts';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const file = path.join(root, 'docs', 'reference', 'env.md');

const services = [];
for (const name of readdirSync(path.join(root, 'services')).sort()) {
  const source = path.join(root, 'services', name, 'src', 'env.ts');
  if (!existsSync(source)) continue;
  const module = await import(pathToFileURL(source).href);
  const specs = Object.entries(module).filter(([key]) => key.endsWith('EnvSpec'));
  if (specs.length !== 1) throw new Error(`services/${name}/src/env.ts: expected one export named *EnvSpec, found ${specs.length}`);
  services.push({ name, spec: specs[0][1] });
}

const text = renderEnvReference(services);
const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
if (process.argv.includes('--check')) {
  const drift = envReferenceDrift(current, text);
  if (drift.length > 0) {
    console.error(`docs/reference/env.md is out of date (run pnpm gen:docs):\n${drift.join('\n')}`);
    process.exit(1);
  }
} else if (current !== text) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  console.log('wrote docs/reference/env.md');
}
