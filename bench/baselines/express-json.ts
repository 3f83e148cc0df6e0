/** Baseline: express 5 (the version the admin service runs) parsing the JSON body, then answering 200. */
import express from 'express';

const port = Number(process.env['PORT'] ?? 0);

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
// Like ingest: JSON whatever the Content-Type says, up to the batch limit.
app.use(express.json({ limit: '500kb', type: () => true }));
app.use((req, res) => {
  if (typeof req.body !== 'object' || req.body === null) {
    res.status(400).json({ success: false });
    return;
  }
  res.status(200).json({ success: true });
});

const server = app.listen(port, '127.0.0.1');
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
