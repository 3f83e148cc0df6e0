import { hash } from 'node:crypto';
import type { Audience } from '../generated/contracts.js';

/**
 * What decides an audience's membership, digested: its sources and condition (not its name or
 * destinations). When it changes, every profile is evaluated again by a full pass; the admin API
 * compares it with the pass state to tell whether the backfill of the current definition ran.
 */
export function audienceFingerprint(audience: Pick<Audience, 'sourceIds' | 'condition'>): string {
  return hash('sha256', JSON.stringify([[...audience.sourceIds].sort(), audience.condition]), 'base64url').slice(0, 16);
}
