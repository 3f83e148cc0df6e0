// An eventrelay webhook receiver in Node, standard library only (docs/receivers.md). It checks
// every request's signature over the raw body bytes before anything else, answers at once (204
// when it verified, 401 when not) and leaves the work for later.
//
//   WEBHOOK_SECRET   the destination's shared secret (required)
//   WEBHOOK_SCHEME   x-signature (default): X-Signature, or X-Eventrelay-Signature-Next during a
//                    rotation; standard-webhooks: webhook-id, webhook-timestamp, webhook-signature
//   HOST, PORT       where to listen (default 127.0.0.1:3000; PORT=0 takes a free port)
//
//   WEBHOOK_SECRET=... node examples/receivers/verify.mjs
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const MAX_BODY = 1024 * 1024;
// Standard Webhooks: refuse a timestamp further than this from our clock (replayed requests).
const TOLERANCE_S = 5 * 60;

/** Equal strings, compared in a time that does not depend on where they differ. */
function safeEqual(a, b) {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * X-Signature: lowercase hex HMAC-SHA1 of the raw body, keyed with the secret. During a rotation
 * X-Signature is still signed with the previous secret and X-Eventrelay-Signature-Next with the new
 * one, so a receiver that checks both keeps working whichever secret it holds.
 */
function verifyXSignature(secret, rawBody, headers) {
  const expected = createHmac('sha1', secret).update(rawBody).digest('hex');
  return ['x-signature', 'x-eventrelay-signature-next'].some((name) => {
    const given = headers[name];
    return typeof given === 'string' && safeEqual(given, expected);
  });
}

/**
 * The HMAC key of a Standard Webhooks secret, by the rule eventrelay signs with: a whsec_ secret's
 * base64 part, decoded; any other secret (or a whsec_ one whose rest is not base64) as its UTF-8 bytes.
 */
function standardKey(secret) {
  const rest = secret.slice('whsec_'.length);
  return secret.startsWith('whsec_') && rest.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(rest)
    ? Buffer.from(rest, 'base64')
    : Buffer.from(secret, 'utf8');
}

/**
 * Standard Webhooks v1: HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>`, base64; the
 * header holds one or more `v1,<signature>` separated by spaces (two during a rotation).
 */
function verifyStandardWebhooks(secret, rawBody, headers, nowS = Math.floor(Date.now() / 1000)) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (!/^\d+$/.test(timestamp) || Math.abs(nowS - Number(timestamp)) > TOLERANCE_S) return false;
  const expected = createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.`).update(rawBody).digest('base64');
  return signatures.split(' ').some((entry) => entry.startsWith('v1,') && safeEqual(entry.slice(3), expected));
}

const secret = process.env.WEBHOOK_SECRET;
const scheme = process.env.WEBHOOK_SCHEME ?? 'x-signature';
if (!secret) {
  console.error('set WEBHOOK_SECRET to the destination’s shared secret');
  process.exit(2);
}
if (scheme !== 'x-signature' && scheme !== 'standard-webhooks') {
  console.error('WEBHOOK_SCHEME must be x-signature or standard-webhooks');
  process.exit(2);
}

const server = createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) req.destroy();
    else chunks.push(chunk);
  });
  req.on('end', () => {
    // The raw bytes, exactly as received: parsing and re-serializing the JSON would change them.
    const rawBody = Buffer.concat(chunks);
    const ok =
      scheme === 'standard-webhooks'
        ? verifyStandardWebhooks(secret, rawBody, req.headers)
        : verifyXSignature(secret, rawBody, req.headers);
    if (!ok) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('signature does not verify');
      return;
    }
    // Answer first, work later: a slow answer is a timeout to eventrelay, and it sends the call
    // again. Dedupe on X-Eventrelay-Message-Id (or webhook-id): delivery is at-least-once.
    res.writeHead(204).end();
    setImmediate(() => console.log(`received ${req.headers['x-eventrelay-message-id']} (attempt ${req.headers['x-eventrelay-attempt']})`));
  });
});
server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address();
  console.log(`listening on http://${address}:${port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
