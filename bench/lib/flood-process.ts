/** The flood's own process (flood.ts): `node --import tsx flood-process.ts '<FloodOptions JSON>'`. */
import { Pool } from 'undici';
import { serveIpc } from '@eventrelay/testkit';
import { floodBodies, type FloodOptions, type FloodResult } from './flood.js';

const o = JSON.parse(process.argv[2] ?? '{}') as FloodOptions;
const pool = new Pool(o.url, { connections: o.connections, pipelining: 1, keepAliveTimeout: 60_000 });
const headers = { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${o.writeKey}:`).toString('base64')}` };
const answers: Record<string, number> = {};
const acked: number[] = [];
let requests = 0;
let transportErrors = 0;
let counter = 0;
let stopping = false;
const bodyOf = floodBodies(o.tag, o.calls);

async function sender(): Promise<void> {
  while (!stopping) {
    const mine = ++counter;
    requests++;
    try {
      const res = await pool.request({ method: 'POST', path: '/v1/batch', headers, body: bodyOf(mine) });
      const text = await res.body.text();
      const code = res.statusCode === 200 ? undefined : (JSON.parse(text) as { code?: unknown }).code;
      const key = typeof code === 'string' ? `${res.statusCode} ${code}` : String(res.statusCode);
      answers[key] = (answers[key] ?? 0) + 1;
      if (res.statusCode >= 200 && res.statusCode < 300) acked.push(mine);
    } catch {
      transportErrors++;
    }
  }
}

let senders: Promise<void>[] = [];
serveIpc(async (msg) => {
  if (msg.type === 'go') {
    senders = Array.from({ length: o.connections }, () => sender());
    return undefined;
  }
  if (msg.type !== 'stop') throw new Error(`unknown call ${msg.type}`);
  stopping = true;
  await Promise.all(senders);
  await pool.close();
  const result: FloodResult = { requests, answers, acked, transportErrors };
  return result;
});
process.send?.({ type: 'ready' });
