/**
 * The web console's static files (packages/console's `vite build` output) under /console/. Only
 * index.html and the files of assets/ are served: a request path must match a plain file name, so
 * no encoding of `..` or of a slash can reach outside the build. Every answer, errors included,
 * carries a strict Content-Security-Policy: the console runs only its own bundled script and
 * style, and talks only to this origin's /admin/v1.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';

const CONSOLE_BASE = '/console';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

/** One segment after assets/, of the characters vite's hashed names use. */
const ASSET_PATH = /^assets\/[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

/**
 * A request listener part for the console: true when it answered (the path is /console or under
 * it), false to let the API handle the request.
 */
export function consoleHandler(distDir: string): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const url = req.url ?? '/';
    const pathname = url.split('?', 1)[0] ?? '';
    if (pathname !== CONSOLE_BASE && !pathname.startsWith(`${CONSOLE_BASE}/`)) return false;
    securityHeaders(res);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      plain(res, 405, 'The console only answers GET and HEAD.');
      return true;
    }
    if (pathname === CONSOLE_BASE) {
      // Relative asset URLs resolve against the directory, so the console lives at /console/.
      res.statusCode = 301;
      res.setHeader('Location', `${CONSOLE_BASE}/${url.slice(pathname.length)}`);
      res.end();
      return true;
    }
    const file = pathname.slice(CONSOLE_BASE.length + 1);
    serve(distDir, file, req.method === 'HEAD', res).catch(() => {
      if (!res.headersSent) plain(res, 500, 'The console file could not be read.');
      else res.destroy();
    });
    return true;
  };
}

async function serve(distDir: string, file: string, head: boolean, res: ServerResponse): Promise<void> {
  if (file === '' || file === 'index.html') {
    const html = await readIfExists(path.join(distDir, 'index.html'));
    if (!html) {
      plain(res, 503, 'The console is not built. Run `pnpm build` (it builds packages/console into packages/console/dist), then reload.');
      return;
    }
    // The page names the hashed assets of the current build, so it is never reused unchecked.
    send(res, html, 'text/html; charset=utf-8', 'no-cache', head);
    return;
  }
  const type = CONTENT_TYPES[path.extname(file)];
  const body = ASSET_PATH.test(file) && type ? await readIfExists(path.join(distDir, file)) : undefined;
  if (!body || !type) {
    plain(res, 404, 'No such console file.');
    return;
  }
  // Names carry a hash of the content: a changed file gets a new name.
  send(res, body, type, 'public, max-age=31536000, immutable', head);
}

async function readIfExists(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return undefined;
    throw err;
  }
}

function securityHeaders(res: ServerResponse): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

function send(res: ServerResponse, body: Buffer, type: string, cacheControl: string, head: boolean): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', body.length);
  res.setHeader('Cache-Control', cacheControl);
  res.end(head ? undefined : body);
}

function plain(res: ServerResponse, status: number, message: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.end(`${message}\n`);
}
