/**
 * Where profiles, audience membership and regulations live in Redis. Named in one place because
 * several processes touch them: the audiences service writes them, the config store erases an
 * audience's keys when it is deleted, the admin API reads membership counts and regulations.
 */
export function profileKeys(prefix: string) {
  return {
    /** Hash: one user's profile (profile-store.ts documents the fields). */
    profile: (userId: string) => `${prefix}:prof:u:${userId}`,
    /** Sorted set, all scores 0: every userId with a profile, paged in lexical order by full passes. */
    index: `${prefix}:prof:index`,
    /**
     * Sorted set userId → time of the profile's last write (ms): whose profile has been idle past
     * AUDIENCES_PROFILE_TTL_DAYS, so the periodic sync can take them out of the index and audiences.
     */
    seen: `${prefix}:prof:seen`,
    /** Set: the audience's members as last delivered. */
    members: (audienceId: string) => `${prefix}:aud:${audienceId}:members`,
    /** Hash userId → transition not yet handed to the delivery queue (see membership-store.ts). */
    outbox: (audienceId: string) => `${prefix}:aud:${audienceId}:outbox`,
    /** Hash: the audience's full-pass state (fingerprint, status, cursor, counts). */
    state: (audienceId: string) => `${prefix}:aud:${audienceId}:state`,
    /** Hash regulationId → Regulation JSON. */
    regulations: `${prefix}:reg:regulations`,
    /** Sorted set: deletion tombstones, digest of (sourceId, userId) → erasure time (erasures.ts). */
    erased: `${prefix}:reg:erased`,
    /** Hash: a regulation's delete-notice counts per destination (deletion-receipts.ts). */
    receipts: (regulationId: string) => `${prefix}:reg:receipts:${regulationId}`,
    /** Hash: the state of each delete notice of a regulation (deletion-receipts.ts). */
    noticeStates: (regulationId: string) => `${prefix}:reg:notices:${regulationId}`,
  } as const;
}

/** Every key that belongs to one audience, erased with it. */
export function audienceDataKeys(prefix: string, audienceId: string): string[] {
  const keys = profileKeys(prefix);
  return [keys.members(audienceId), keys.outbox(audienceId), keys.state(audienceId)];
}
