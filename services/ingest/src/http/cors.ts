import type { IncomingMessage, ServerResponse } from 'node:http';

/** Browser sources post from any origin; credentials are allowed only for an echoed origin. */
export function applyCors(req: IncomingMessage, res: ServerResponse): void {
  const origin = req.headers.origin;
  if (origin) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.setHeader('Vary', 'Origin');
  } else res.setHeader('Access-Control-Allow-Origin', '*');
}

export function answerPreflight(req: IncomingMessage, res: ServerResponse): void {
  applyCors(req, res);
  res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
  res.setHeader(
    'Access-Control-Allow-Headers',
    req.headers['access-control-request-headers'] ?? 'Content-Type, Authorization, Content-Encoding',
  );
  res.setHeader('Access-Control-Max-Age', '86400');
  res.statusCode = 204;
  res.end();
}
