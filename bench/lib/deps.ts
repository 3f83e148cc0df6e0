/**
 * The bench lives outside every workspace package, so packages that only the services depend on
 * (express, ioredis) are loaded from the ingest service's own node_modules: the baselines then run
 * the very express version the intake runs, and no root dependency is needed.
 */
import { createRequire } from 'node:module';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const BENCH_DIR = path.join(REPO_ROOT, 'bench');
export const INGEST_DIR = path.join(REPO_ROOT, 'services', 'ingest');

const ingestRequire = createRequire(path.join(INGEST_DIR, 'package.json'));

/** `require(id)` as seen from services/ingest; the caller states the shape it relies on. */
export function requireFromIngest<T>(id: string): T {
  return ingestRequire(id) as T;
}
