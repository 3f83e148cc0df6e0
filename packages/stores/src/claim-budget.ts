/**
 * The time side of a source's claim budget (docs/intake.md, "Budgets"): what a source makes Redis
 * keep for the dedupe window is one key per call it stored, so its budget counts those keys' bytes
 * until they expire. Each key cannot be tracked on its own at that cost, so claims are summed per
 * bucket of 1/24 of the window, and a bucket's bytes are freed once every claim in it has expired:
 * a claim is counted at most one bucket (about 4%) longer than Redis keeps it, never shorter.
 * Pure: the intake script does the sums, this says which buckets count.
 */

/** Buckets per dedupe window: finer frees bytes sooner, coarser costs fewer hash fields. */
const BUCKETS_PER_WINDOW = 24;

/**
 * What Redis keeps per claim beyond its key's characters: the key's header, its entry in the key
 * space and in the expiry table, jemalloc's rounding. Measured on Redis 7.0 with 100,000 `SET key 1
 * NX EX 86400` (used_memory before and after): 91 to 114 bytes over the key's length for keys of
 * 10 to 131 characters; the largest is taken, so the budget errs towards counting more.
 */
export const CLAIM_OVERHEAD_BYTES = 114;

export interface ClaimBuckets {
  /** Seconds per bucket. */
  readonly bucketS: number;
  /** The bucket claims made now go to. */
  readonly bucket: number;
  /** The first bucket whose claims may still be alive; those before it are freed. */
  readonly liveFrom: number;
}

function bucketSecondsOf(ttlS: number): number {
  return Math.max(1, Math.floor(ttlS / BUCKETS_PER_WINDOW));
}

/** The buckets at `nowMs` for a dedupe window of `ttlS` seconds (> 0). */
export function claimBuckets(nowMs: number, ttlS: number): ClaimBuckets {
  const bucketS = bucketSecondsOf(ttlS);
  const nowS = Math.floor(nowMs / 1000);
  // Bucket b holds claims made in [b·bucketS, (b+1)·bucketS): all of them are gone at bucketFreedAtS(b).
  return { bucketS, bucket: Math.floor(nowS / bucketS), liveFrom: Math.floor((nowS - ttlS) / bucketS) };
}

/** When (epoch seconds) every claim of `bucket` has expired, and its bytes are freed. */
export function bucketFreedAtS(bucket: number, ttlS: number): number {
  return (bucket + 1) * bucketSecondsOf(ttlS) + ttlS;
}
