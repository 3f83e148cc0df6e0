/**
 * How an audience's last full pass over the profiles stands, as the audiences service keeps it in
 * `<prefix>:aud:<id>:state` (one hash field per key below). The audiences service writes it; the
 * admin API reads it for the audience's `membership`.
 */
export interface PassState {
  /** audienceFingerprint of the definition the pass is for. */
  readonly fingerprint?: string;
  readonly status?: 'backfilling' | 'ready';
  /** The last userId the running pass finished with ('' from the start). */
  readonly cursor?: string;
  readonly scanned?: number;
  /** Epoch ms. */
  readonly lastFullSyncAt?: number;
}

/** The state from its hash fields (HGETALL); unknown or missing fields are left out. */
export function parsePassState(h: Record<string, string>): PassState {
  return {
    ...(h['fingerprint'] ? { fingerprint: h['fingerprint'] } : {}),
    ...(h['status'] === 'backfilling' || h['status'] === 'ready' ? { status: h['status'] } : {}),
    ...(h['cursor'] !== undefined ? { cursor: h['cursor'] } : {}),
    ...(h['scanned'] ? { scanned: Number(h['scanned']) } : {}),
    ...(h['lastFullSyncAt'] ? { lastFullSyncAt: Number(h['lastFullSyncAt']) } : {}),
  };
}
