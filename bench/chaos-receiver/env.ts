/**
 * The chaos receiver's environment, validated once: a bad value throws an error naming the
 * variable (main.ts turns it into exit 1). The plan file is read through `readFile` so the checks
 * stay testable without a file system.
 */
import { parsePlan, type ChaosPlan } from './behaviour.js';

export interface ChaosEnv {
  /** One HTTP listener per entry; 0 = a free port picked at start. */
  readonly httpPorts: readonly number[];
  /** The HTTPS listener's port (0 = free port), or null without CHAOS_TLS=1. */
  readonly httpsPort: number | null;
  readonly plan: ChaosPlan;
  readonly planFile: string | null;
  readonly secret: string | null;
}

/** Enough for one listener per destination of any bench scenario, small enough to catch a typo. */
const MAX_LISTENERS = 256;

function port(name: string, raw: string): number {
  const n = Number(raw.trim());
  if (raw.trim() === '' || !Number.isInteger(n) || n < 0 || n > 65_535)
    throw new Error(`${name} must hold ports between 0 and 65535, got "${raw}"`);
  return n;
}

export function loadChaosEnv(source: NodeJS.ProcessEnv, readFile: (path: string) => string): ChaosEnv {
  const listenersRaw = source['CHAOS_LISTENERS']?.trim() || undefined;
  const portsRaw = source['CHAOS_PORTS']?.trim() || undefined;
  let httpPorts: number[];
  if (portsRaw !== undefined) {
    httpPorts = portsRaw.split(',').map((p) => port('CHAOS_PORTS', p));
    if (listenersRaw !== undefined && Number(listenersRaw) !== httpPorts.length)
      throw new Error(`CHAOS_LISTENERS (${listenersRaw}) disagrees with the ${httpPorts.length} ports of CHAOS_PORTS; set one of them`);
  } else {
    const n = listenersRaw === undefined ? 1 : Number(listenersRaw);
    if (!Number.isInteger(n) || n < 1 || n > MAX_LISTENERS)
      throw new Error(`CHAOS_LISTENERS must be a whole number between 1 and ${MAX_LISTENERS}, got "${listenersRaw}"`);
    httpPorts = new Array<number>(n).fill(0);
  }

  const tls = source['CHAOS_TLS']?.trim() ?? '';
  if (tls !== '' && tls !== '0' && tls !== '1') throw new Error(`CHAOS_TLS must be 1 or 0, got "${tls}"`);
  const tlsPortRaw = source['CHAOS_TLS_PORT']?.trim() || undefined;
  if (tlsPortRaw !== undefined && tls !== '1') throw new Error('CHAOS_TLS_PORT is set but CHAOS_TLS is not 1');
  const httpsPort = tls === '1' ? (tlsPortRaw === undefined ? 0 : port('CHAOS_TLS_PORT', tlsPortRaw)) : null;

  const planFile = source['CHAOS_PLAN']?.trim() || null;
  let plan: ChaosPlan = { routes: {} };
  if (planFile !== null) {
    let text: string;
    try {
      text = readFile(planFile);
    } catch (err) {
      throw new Error(`CHAOS_PLAN: cannot read ${planFile}: ${(err as Error).message}`, { cause: err });
    }
    try {
      plan = parsePlan(JSON.parse(text));
    } catch (err) {
      throw new Error(`CHAOS_PLAN (${planFile}): ${(err as Error).message}`, { cause: err });
    }
  }

  const secret = source['SHARED_SECRET'] || null;
  return Object.freeze({ httpPorts: Object.freeze(httpPorts), httpsPort, plan, planFile, secret });
}
