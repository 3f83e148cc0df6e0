import { bucketFreedAtS, claimBuckets } from './claim-budget';

describe('claim budget buckets', () => {
  const DAY = 86_400;

  it('splits the window into 24 buckets, and frees a bucket once its last claim has expired', () => {
    const now = Date.parse('2026-11-29T09:30:00.000Z');
    const b = claimBuckets(now, DAY);
    expect(b.bucketS).toBe(3600);
    expect(b.bucket).toBe(Math.floor(now / 1000 / 3600));
    // The 09:00 bucket's last claim (09:59:59) expires at 10:00 the next day.
    expect(bucketFreedAtS(b.bucket, DAY)).toBe(Date.parse('2026-11-30T10:00:00.000Z') / 1000);
    // A day later the 09:00 bucket is still counted until 10:00, and freed then.
    expect(claimBuckets(Date.parse('2026-11-30T09:59:59.000Z'), DAY).liveFrom).toBe(b.bucket);
    expect(claimBuckets(Date.parse('2026-11-30T10:00:00.000Z'), DAY).liveFrom).toBe(b.bucket + 1);
  });

  it('never frees a claim before Redis does, and keeps it at most one bucket longer', () => {
    for (const ttl of [1, 7, 240, DAY, 30 * DAY])
      for (const offset of [0, 1, 599, 3599, 86_399]) {
        const claimedS = 1_795_000_000 + offset;
        const { bucket, bucketS } = claimBuckets(claimedS * 1000, ttl);
        const freed = bucketFreedAtS(bucket, ttl);
        expect(freed).toBeGreaterThanOrEqual(claimedS + ttl);
        expect(freed - (claimedS + ttl)).toBeLessThanOrEqual(bucketS);
        // Counted while alive, freed at once after.
        expect(claimBuckets((freed - 1) * 1000, ttl).liveFrom).toBeLessThanOrEqual(bucket);
        expect(claimBuckets(freed * 1000, ttl).liveFrom).toBeGreaterThan(bucket);
      }
  });
});
