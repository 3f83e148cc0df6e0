// Writes docs/admin-openapi.json, the committed copy of the document the admin API serves at
// /admin/v1/openapi.json (so it can be read without running anything). With --check it writes
// nothing and exits 1 when the committed copy is out of date; openapi.test.ts checks the same.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openApiDocument } from '../src/http/openapi-document';

const file = path.resolve(__dirname, '../../../docs/admin-openapi.json');
const text = `${JSON.stringify(openApiDocument(), null, 2)}\n`;
const current = (() => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
})();
if (process.argv.includes('--check')) {
  if (current !== text) {
    console.error('docs/admin-openapi.json is out of date (run pnpm gen:openapi)');
    process.exit(1);
  }
} else if (current !== text) {
  writeFileSync(file, text);
  console.log('wrote docs/admin-openapi.json');
}
