/**
 * Slow clients against the real ingest: a client that never finishes its headers, or its body, is
 * cut off at INGEST_HEADERS_TIMEOUT_MS / INGEST_REQUEST_TIMEOUT_MS; connections over
 * INGEST_MAX_CONNECTIONS are dropped at once. Short bounds here so the test is quick.
 */
import { connect, type Socket } from 'node:net';
import { post, startTestIngest, type TestIngest } from '../../../test/support/ingest';

/** Resolves with what the server sent and how long it kept the connection open. */
function openAndStall(port: number, sent: string): { socket: Socket; closed: Promise<{ ms: number; received: string }> } {
  const started = Date.now();
  const socket = connect(port, '127.0.0.1', () => socket.write(sent));
  let received = '';
  socket.on('data', (d) => (received += d.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<{ ms: number; received: string }>((resolve) =>
    socket.on('close', () => resolve({ ms: Date.now() - started, received })),
  );
  return { socket, closed };
}

describe('slow clients', () => {
  let t: TestIngest;
  let port: number;
  beforeAll(async () => {
    t = await startTestIngest({
      label: 'slow',
      env: { INGEST_HEADERS_TIMEOUT_MS: '400', INGEST_REQUEST_TIMEOUT_MS: '1000', INGEST_MAX_CONNECTIONS: '4' },
    });
    port = t.ingest.port;
  });
  afterAll(() => t.close());

  it('closes a connection whose headers never end, after the headers timeout', async () => {
    const { closed } = openAndStall(port, 'POST /v1/track HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n');
    const { ms, received } = await closed;
    expect(ms).toBeGreaterThanOrEqual(350);
    expect(ms).toBeLessThan(2500);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
  });

  it('answers 408 and closes when the body never ends, after the request timeout', async () => {
    const head = 'POST /v1/track HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"userId":';
    const { closed } = openAndStall(port, head);
    const { ms, received } = await closed;
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(3500);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect((await t.routeJobs()).length).toBe(0);
  });

  it('drops connections over the limit at once and serves again when they go', async () => {
    const idle = Array.from({ length: 4 }, () => openAndStall(port, ''));
    await new Promise((r) => setTimeout(r, 100));
    const over = openAndStall(port, '');
    const { ms } = await over.closed;
    expect(ms).toBeLessThan(300);
    for (const s of idle) s.socket.destroy();
    await Promise.all(idle.map((s) => s.closed));
    const res = await post(t.url, '/v1/track', { userId: 'u', event: 'E' }, { writeKey: t.writeKey });
    expect(res.status).toBe(200);
  });
});
