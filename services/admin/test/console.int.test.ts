/**
 * The web console's static files as the admin service serves them at /console/: its security
 * headers on every answer, the index and hashed assets with their caching, traversal refused and
 * a missing build answered with 503. A build of our own in a temporary directory stands in for
 * packages/console/dist, so the test does not depend on the real bundle.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { deletePrefix, SHARED_REDIS_URL, uniquePrefix } from '@eventrelay/testkit';
import { startTestAdmin, type TestAdmin } from '../../../test/support/admin';
import { CONSOLE_CSP } from '../src/http/console';

const INDEX = '<!doctype html><title>console</title><script type="module" src="/console/assets/index-AbC123.js"></script>';
const SCRIPT = 'console.log("bundle");';
const SECRET = 'outside-the-build-0000';

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request with the path exactly as given: fetch would normalise the `..` this test sends. */
function raw(url: string, rawPath: string, method = 'GET'): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, path: rawPath, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the console at /console/', () => {
  let root: string;
  let admin: TestAdmin | undefined;
  const prefix = uniquePrefix('console');

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'console-'));
    await mkdir(path.join(root, 'dist', 'assets'), { recursive: true });
    await mkdir(path.join(root, 'empty'));
    await writeFile(path.join(root, 'dist', 'index.html'), INDEX);
    await writeFile(path.join(root, 'dist', 'assets', 'index-AbC123.js'), SCRIPT);
    await writeFile(path.join(root, 'dist', 'assets', 'notes.txt'), 'no type of ours');
    await writeFile(path.join(root, 'secret.txt'), SECRET);
    await writeFile(path.join(root, 'dist', 'secret.js'), SECRET);
  });

  afterEach(async () => {
    await admin?.close();
    admin = undefined;
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  const start = async (dir: string) => (admin = await startTestAdmin({ prefix, env: { ADMIN_CONSOLE_DIR: dir } }));

  it('serves index.html with the strict CSP, never cached unchecked', async () => {
    const { url } = await start(path.join(root, 'dist'));
    for (const p of ['/console/', '/console/index.html']) {
      const answer = await raw(url, p);
      expect(answer.status).toBe(200);
      expect(answer.body).toBe(INDEX);
      expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(answer.headers['cache-control']).toBe('no-cache');
      expect(answer.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers['referrer-policy']).toBe('no-referrer');
    }
    expect(CONSOLE_CSP).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
  });

  it('serves hashed assets as immutable, with their content type', async () => {
    const { url } = await start(path.join(root, 'dist'));
    const answer = await raw(url, '/console/assets/index-AbC123.js');
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(SCRIPT);
    expect(answer.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(answer.headers['content-security-policy']).toBe(CONSOLE_CSP);
    const head = await raw(url, '/console/assets/index-AbC123.js', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('redirects /console to /console/, keeping the query', async () => {
    const { url } = await start(path.join(root, 'dist'));
    const answer = await raw(url, '/console?x=1');
    expect(answer.status).toBe(301);
    expect(answer.headers['location']).toBe('/console/?x=1');
    expect(answer.headers['content-security-policy']).toBe(CONSOLE_CSP);
  });

  it('refuses every path outside index.html and assets/, however it is spelled', async () => {
    const { url } = await start(path.join(root, 'dist'));
    const attempts = [
      '/console/../secret.txt',
      '/console/assets/../../secret.txt',
      '/console/assets/..%2f..%2fsecret.txt',
      '/console/assets/%2e%2e/%2e%2e/secret.txt',
      '/console/%2e%2e/secret.txt',
      '/console/assets/..\\..\\secret.txt',
      '/console/secret.js',
      '/console/assets/',
      '/console/assets/missing-123.js',
      '/console/assets/notes.txt',
      '/console//etc/passwd',
    ];
    for (const p of attempts) {
      const answer = await raw(url, p);
      expect({ p, status: answer.status }).toEqual({ p, status: 404 });
      expect(answer.body).not.toContain(SECRET);
      expect(answer.headers['content-security-policy']).toBe(CONSOLE_CSP);
    }
    const post = await raw(url, '/console/', 'POST');
    expect(post.status).toBe(405);
    expect(post.headers['allow']).toBe('GET, HEAD');
  });

  it('answers 503 with what to do when the console was not built', async () => {
    const { url } = await start(path.join(root, 'empty'));
    const answer = await raw(url, '/console/');
    expect(answer.status).toBe(503);
    expect(answer.body).toContain('pnpm build');
    expect(answer.headers['content-security-policy']).toBe(CONSOLE_CSP);
    // The API is unaffected.
    expect((await raw(url, '/admin/v1/sources')).status).toBe(401);
  });
});
