/**
 * Where profiles, audience membership and regulations live in Redis. Named in one place because
 * several processes touch them: the audiences service writes them, the config store erases an
 * audience's keys when it is deleted, the admin API reads membership counts and regulations.
 */
import { createHash } from 'node:crypto';

/**
 * The longest userId (UTF-8 bytes) a profile key holds as it is. A userId may be 512 characters
 * (and a flood of them is the cheapest way to fill Redis through a public write key), so a longer
 * one is named by a digest instead, so a profile key is at most the prefix plus 72 bytes. 64 keeps the
 * usual ids readable in `redis-cli` (UUIDs, ULIDs, numeric ids, nearly every email address), and
 * every profile written before digests existed keeps its key.
 */
const READABLE_ID_MAX_BYTES = 64;

/**
 * The bounded name of a user's profile: `u:<userId>` for a short id (the key profiles always had),
 * `h:<43 base64url characters of sha256(userId)>` for a longer one. The two never collide: the
 * `u:`/`h:` tag says which form it is. Every reader and writer of a profile goes through this
 * (`profileKeys(prefix).profile`), so a lookup by userId finds the profile whatever its length.
 */
export function profileId(userId: string): string {
  return Buffer.byteLength(userId, 'utf8') <= READABLE_ID_MAX_BYTES
    ? `u:${userId}`
    : `h:${createHash('sha256').update(userId, 'utf8').digest('base64url')}`;
}

export function profileKeys(prefix: string) {
  return {
    /** Hash: one user's profile (profile-store.ts documents the fields); its name is bounded (profileId). */
    profile: (userId: string) => `${prefix}:prof:${profileId(userId)}`,
    /**
     * Where the profile of a long userId was kept before long ids were digested (the id itself),
     * undefined for a short id (whose key never changed). The next write moves it to `profile`;
     * an erasure or expiry deletes both.
     */
    formerProfile: (userId: string) => (profileId(userId).startsWith('h:') ? `${prefix}:prof:u:${userId}` : undefined),
    /** Sorted set, all scores 0: every userId with a profile, paged in lexical order by full passes. */
    index: `${prefix}:prof:index`,
    /**
     * Sorted set userId → time of the profile's last write (ms): whose profile has been idle past
     * AUDIENCES_PROFILE_TTL_DAYS, so the periodic sync can take them out of the index and audiences.
     */
    seen: `${prefix}:prof:seen`,
    /**
     * Sorted set profileId → time of the source's last write to that profile (ms): the profiles a
     * source holds, whose ZCARD is checked against AUDIENCES_MAX_PROFILES_PER_SOURCE.
     */
    sourceProfiles: (sourceId: string) => `${prefix}:prof:src:${sourceId}`,
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
