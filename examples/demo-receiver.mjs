// A webhook receiver for the local quick start: prints each delivery and whether its X-Signature
// verified. Verification is what a real receiver should do: HMAC-SHA1 over the raw body bytes with
// the shared secret, compared in constant time — here with verifySignature from @eventrelay/config
// (the function webhook-delivery's signing is tested against), built by `pnpm build`.
//   DEMO_RECEIVER_PORT (default 9999), DEMO_SHARED_SECRET (default the example config's secret)
import { createServer } from 'node:http';
import { SIGNATURE_HEADER, verifySignature } from '../packages/config/dist/src/index.js';

const port = Number(process.env.DEMO_RECEIVER_PORT ?? 9999);
const secret = process.env.DEMO_SHARED_SECRET ?? 'demo-shared-secret';

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const ok = verifySignature(secret, body, req.headers[SIGNATURE_HEADER]);
    let summary;
    try {
      const call = JSON.parse(body.toString('utf8'));
      summary = `${call.type} ${call.event ?? call.name ?? ''} user=${call.userId ?? call.anonymousId ?? '-'}`.replace(/\s+/g, ' ');
    } catch {
      summary = 'body is not JSON';
    }
    const id = req.headers['x-eventrelay-message-id'];
    const attempt = req.headers['x-eventrelay-attempt'];
    console.log(`[demo-receiver] ${summary}  messageId=${id} attempt=${attempt}  signature ${ok ? 'verified ✓' : 'INVALID ✗'}`);
    console.log(`[demo-receiver]   ${body.toString('utf8')}`);
    res.writeHead(ok ? 200 : 401, { 'content-type': 'text/plain' }).end(ok ? 'ok' : 'bad signature');
  });
});
server.listen(port, '127.0.0.1', () => console.log(`[demo-receiver] listening on http://127.0.0.1:${port}/webhook`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));
