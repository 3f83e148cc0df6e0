/** Baseline: a bare Node HTTP server that reads the body and answers 200 without other work. */
import { createServer } from 'node:http';

const port = Number(process.env['PORT'] ?? 0);
const answer = Buffer.from('{"success":true}');

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': answer.length });
    res.end(answer);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
