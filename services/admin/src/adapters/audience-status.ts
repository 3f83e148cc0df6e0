/** Reads what the audiences service keeps about an audience's membership (for GET /audiences). */
import type { RedisClient } from '@eventrelay/runtime';
import { parsePassState, type PassState } from '@eventrelay/config';
import { execAll } from '@eventrelay/runtime';
import { profileKeys } from '@eventrelay/stores';

export class AudienceStatus {
  private readonly keys: ReturnType<typeof profileKeys>;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = profileKeys(prefix);
  }

  /** Each audience's pass state and member count, in one round trip. */
  async read(audienceIds: readonly string[]): Promise<{ pass: PassState; members: number }[]> {
    if (audienceIds.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of audienceIds) pipeline.hgetall(this.keys.state(id)).scard(this.keys.members(id));
    const values = await execAll(pipeline);
    return audienceIds.map((_, i) => ({
      pass: parsePassState(values[2 * i] as Record<string, string>),
      members: Number(values[2 * i + 1]),
    }));
  }
}
