// Generates src/generated/contracts.ts from schemas/*.schema.json: one file, so a type referenced
// by several schemas (NormalizedCall, WebhookSettings) is declared once. With --check it writes
// nothing and exits 1 when the committed file differs from what the schemas produce (drift).
import { compile } from 'json-schema-to-typescript';
import { readdir, readFile, writeFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const schemaDir = path.join(root, 'schemas');
const outDir = path.join(root, 'src', 'generated');
const outFile = path.join(outDir, 'contracts.ts');
const check = process.argv.includes('--check');

const files = (await readdir(schemaDir)).filter((f) => f.endsWith('.schema.json')).sort();
const properties = {};
for (const file of files) {
  const { title } = JSON.parse(await readFile(path.join(schemaDir, file), 'utf8'));
  properties[title] = { $ref: file };
}
const index = {
  title: 'Contracts',
  description: 'Every contract type, one per schema file under schemas/.',
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
};
const ts = await compile(index, 'Contracts', {
  cwd: schemaDir,
  bannerComment:
    '/* Generated from schemas/*.schema.json by scripts/gen-types.mjs. Do not edit: change a schema and run pnpm gen:types. */',
  additionalProperties: false,
  ignoreMinAndMaxItems: true,
  style: { singleQuote: true },
});

const stale = (await readdir(outDir)).filter((f) => f !== 'contracts.ts');
const current = await readFile(outFile, 'utf8').catch(() => '');
if (check) {
  const problems = [...(current === ts ? [] : ['contracts.ts is out of date']), ...stale.map((f) => `${f} is not generated any more`)];
  if (problems.length > 0) {
    console.error(`generated types: ${problems.join('; ')} (run pnpm gen:types)`);
    process.exit(1);
  }
} else {
  if (current !== ts) await writeFile(outFile, ts);
  for (const f of stale) await rm(path.join(outDir, f));
}
