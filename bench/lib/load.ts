/** autocannon, run in this process, with a fresh body per request. */
import autocannon from 'autocannon';
import type { BodyFactory } from './payloads.js';

export interface LoadOptions {
  readonly url: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly bodies: BodyFactory;
  readonly connections: number;
  readonly durationS: number;
}

export interface LoadResult {
  readonly durationS: number;
  readonly requests: number;
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly statusCodes: Record<string, number>;
}

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: opts.url,
    connections: opts.connections,
    duration: opts.durationS,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path: opts.path,
        headers: opts.headers,
        setupRequest: (req) => ({ ...req, body: opts.bodies.next() }),
      },
    ],
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
  const durationS = result.duration > 0 ? result.duration : opts.durationS;
  return {
    durationS,
    requests: result['2xx'] + result.non2xx,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    rps: result['2xx'] / durationS,
    p50Ms: result.latency.p50,
    p90Ms: result.latency.p90,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    statusCodes,
  };
}
