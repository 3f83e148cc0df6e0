/**
 * The TypeScript types under src/generated are generated from schemas/*.schema.json and committed.
 * `gen-types.mjs --check` regenerates them in memory and exits 1 when the committed files differ,
 * so editing a schema without running `pnpm gen:types` fails here.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '../../..');

it('the committed generated types match the schemas', () => {
  const result = spawnSync(process.execPath, ['packages/config/scripts/gen-types.mjs', '--check'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(result.error).toBeUndefined();
  if (result.status !== 0) throw new Error(`gen-types.mjs --check exited with ${String(result.status)}: ${result.stderr}`);
  expect(result.status).toBe(0);
});
