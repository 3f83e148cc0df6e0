/**
 * The harness itself: a receiver that checks signatures, a private Redis that keeps what it
 * acknowledged across a crash, ensureRedis, and a stack of the compiled services delivering a
 * signed call end to end.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { signBody } from '@eventrelay/config';
import {
  SHARED_REDIS_URL,
  buildServices,
  deletePrefix,
  ensureRedis,
  freePort,
  startPrivateRedis,
  startReceiver,
  startStack,
  uniquePrefix,
} from '@eventrelay/testkit';

describe('startReceiver with a secret', () => {
  it('marks each request as verified or not, and answers 401 to a bad one when asked', async () => {
    const receiver = await startReceiver({ secret: 'shh', rejectBadSignatures: true });
    try {
      const body = '{"type":"track"}';
      const good = await fetch(receiver.url, { method: 'POST', body, headers: { 'x-signature': signBody('shh', body) } });
      const forged = await fetch(receiver.url, { method: 'POST', body, headers: { 'x-signature': signBody('other', body) } });
      const unsigned = await fetch(receiver.url, { method: 'POST', body });
      expect([good.status, forged.status, unsigned.status]).toEqual([200, 401, 401]);
      expect(receiver.requests.map((r) => r.signatureValid)).toEqual([true, false, false]);
      expect(receiver.badSignatures()).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });

  it('leaves signatureValid undefined without a secret', async () => {
    const receiver = await startReceiver();
    try {
      await fetch(receiver.url, { method: 'POST', body: '{}' });
      expect(receiver.requests[0]?.signatureValid).toBeUndefined();
    } finally {
      await receiver.close();
    }
  });
});

describe('Redis', () => {
  it('a private redis-server keeps what it acknowledged across a SIGKILL and a restart on the same port', async () => {
    const redis = await startPrivateRedis();
    const client = new Redis(redis.url, { maxRetriesPerRequest: null });
    client.on('error', () => undefined);
    try {
      await client.set('kept', 'yes');
      await redis.stop();
      await redis.start();
      expect(await client.get('kept')).toBe('yes');
    } finally {
      client.disconnect();
      await redis.close();
    }
  });

  it('ensureRedis uses the server that answers, and starts one for a local URL where none does', async () => {
    const shared = await ensureRedis({ url: SHARED_REDIS_URL });
    expect(shared).toMatchObject({ url: SHARED_REDIS_URL, started: undefined });
    const port = await freePort();
    const started = await ensureRedis({ url: `redis://127.0.0.1:${port}`, onUrlPort: true });
    try {
      expect(started.url).toBe(`redis://127.0.0.1:${port}`);
      expect(started.started?.process()?.running()).toBe(true);
    } finally {
      await started.close();
    }
    expect(started.started?.process()).toBeUndefined();
  });

  it('ensureRedis names the remedy when a remote REDIS_URL does not answer', async () => {
    await expect(ensureRedis({ url: 'redis://192.0.2.1:6379' })).rejects.toThrow(/REDIS_URL=redis:\/\/192\.0\.2\.1:6379.*redis-server/);
  });

  it('deletePrefix removes the keys under a prefix and nothing else', async () => {
    const prefix = uniquePrefix('testkit');
    const other = uniquePrefix('testkit');
    const client = new Redis(SHARED_REDIS_URL);
    try {
      await client.mset(`${prefix}:a`, '1', `${prefix}:b`, '2', `${other}:a`, '3');
      expect(await deletePrefix(SHARED_REDIS_URL, prefix)).toBe(2);
      expect(await client.exists(`${prefix}:a`, `${prefix}:b`, `${other}:a`)).toBe(1);
    } finally {
      await deletePrefix(client, other);
      client.disconnect();
    }
  });
});

describe('startStack', () => {
  beforeAll(() => buildServices('ingest', 'router', 'webhook-delivery'), 180_000);

  it('starts the compiled services, which deliver a call signed so that the receiver verifies it', async () => {
    const secret = 'stack-secret';
    const receiver = await startReceiver({ secret });
    const dir = mkdtempSync(path.join(tmpdir(), 'eventrelay-testkit-'));
    const configFile = path.join(dir, 'eventrelay.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        sources: [{ id: 'src-kit', name: 'Kit', type: 'server', writeKey: 'wk_testkit_0001' }],
        destinations: [
          {
            id: 'dst-kit',
            name: 'Webhooks',
            enabled: true,
            sourceIds: ['src-kit'],
            settings: { webhooks: [{ url: receiver.url }], sharedSecret: secret },
          },
        ],
        audiences: [],
      }),
    );
    const prefix = uniquePrefix('stack');
    const stack = await startStack({
      redisUrl: SHARED_REDIS_URL,
      prefix,
      configFile,
      services: ['ingest', 'router', 'webhook-delivery'],
      serviceEnv: { router: { ROUTER_FEED_PROFILES: 'false' } },
    });
    try {
      expect(stack.processes().map((p) => p.service)).toEqual(['webhook-delivery', 'router', 'ingest']);
      const res = await fetch(`${stack.url('ingest')}/v1/track`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('wk_testkit_0001:').toString('base64')}` },
        body: JSON.stringify({ userId: 'u1', event: 'Kit Tested', messageId: 'kit-1' }),
      });
      expect(res.status).toBe(200);
      const [delivered] = await receiver.waitFor(1, 20_000);
      expect(delivered?.signatureValid).toBe(true);
      expect(JSON.parse(delivered!.body.toString('utf8'))).toMatchObject({ type: 'track', event: 'Kit Tested' });
      const restarted = await stack.restart('webhook-delivery', { signal: 'SIGKILL' });
      expect(restarted.running()).toBe(true);
      expect(stack.get('webhook-delivery')).toBe(restarted);
    } finally {
      await stack.stop();
      await receiver.close();
      await deletePrefix(SHARED_REDIS_URL, prefix);
    }
    expect(stack.processes()).toEqual([]);
  }, 90_000);
});
