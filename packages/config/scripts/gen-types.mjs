// Generates src/generated/*.ts from schemas/*.schema.json. With --check it writes nothing and
// exits 1 when the committed files differ from what the schemas produce (drift).
import { compileFromFile } from 'json-schema-to-typescript';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const schemaDir = path.join(root, 'schemas');
const outDir = path.join(root, 'src', 'generated');
const check = process.argv.includes('--check');

export async function generate() {
  const out = new Map();
  for (const file of (await readdir(schemaDir)).filter((f) => f.endsWith('.schema.json')).sort()) {
    const ts = await compileFromFile(path.join(schemaDir, file), {
      cwd: schemaDir,
      bannerComment: `/* Generated from schemas/${file} by scripts/gen-types.mjs. Do not edit: change the schema and run pnpm gen:types. */`,
      additionalProperties: false,
      ignoreMinAndMaxItems: true,
      style: { singleQuote: true },
    });
    out.set(file.replace('.schema.json', '.ts'), ts);
  }
  return out;
}

const files = await generate();
let drift = [];
for (const [name, ts] of files) {
  const target = path.join(outDir, name);
  const current = await readFile(target, 'utf8').catch(() => '');
  if (current === ts) continue;
  if (check) drift.push(name);
  else await writeFile(target, ts);
}
if (check && drift.length > 0) {
  console.error(`generated types are out of date: ${drift.join(', ')} (run pnpm gen:types)`);
  process.exit(1);
}
