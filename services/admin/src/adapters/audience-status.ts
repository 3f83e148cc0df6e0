/** Reads what the audiences service keeps about an audience's membership (for GET /audiences). */
import type { Redis } from 'ioredis';
import { profileKeys } from '@eventrelay/runtime';
import type { PassRecord } from '../domain/audiences.js';

export class AudienceStatus {
  private readonly keys: ReturnType<typeof profileKeys>;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.keys = profileKeys(prefix);
  }

  async read(audienceIds: readonly string[]): Promise<{ pass: PassRecord; members: number }[]> {
    if (audienceIds.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of audienceIds) pipeline.hgetall(this.keys.state(id)).scard(this.keys.members(id));
    const results = (await pipeline.exec()) ?? [];
    return audienceIds.map((_, i) => {
      const [stateErr, state] = results[2 * i] ?? [];
      const [countErr, count] = results[2 * i + 1] ?? [];
      if (stateErr) throw stateErr;
      if (countErr) throw countErr;
      const h = state as Record<string, string>;
      const pass: PassRecord = {
        ...(h['fingerprint'] ? { fingerprint: h['fingerprint'] } : {}),
        ...(h['status'] === 'backfilling' || h['status'] === 'ready' ? { status: h['status'] } : {}),
        ...(h['scanned'] ? { scanned: Number(h['scanned']) } : {}),
        ...(h['lastFullSyncAt'] ? { lastFullSyncAt: Number(h['lastFullSyncAt']) } : {}),
      };
      return { pass, members: Number(count) };
    });
  }
}
