/**
 * The harness runs beside the code under test, not inside a service: it reads the host's
 * environment (REDIS_URL, PATH) here and nowhere else, and hands children only what it is told to.
 */
import path from 'node:path';

// eslint-disable-next-line no-restricted-syntax -- the harness is a composition root of its own
const host: NodeJS.ProcessEnv = process.env;

/** A variable of the environment the harness runs in. */
export function hostEnv(name: string): string | undefined {
  return host[name];
}

/** The repository's root (this file is packages/testkit/src or packages/testkit/dist). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
