import { hash } from 'node:crypto';
import type { Audience } from '../generated/contracts.js';

/**
 * What decides an audience's membership, digested: its sources and condition (not its name or
 * destinations). When it changes, every profile is evaluated again by a full pass; the admin API
 * compares it with the pass state to tell whether the backfill of the current definition ran.
 */
export function audienceFingerprint(audience: Pick<Audience, 'sourceIds' | 'condition'>): string {
  return hash('sha256', canonicalJson([[...audience.sourceIds].sort(), audience.condition]), 'base64url').slice(0, 16);
}

// Keys sorted, so the same condition written with its keys in another order (a config file
// reformatted) is the same definition and starts no new backfill.
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
