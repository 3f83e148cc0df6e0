/**
 * Audience membership in Redis: a set of members per audience and an outbox of changes not yet
 * handed to the delivery queue.
 *
 * A change is committed only against the profile version it was evaluated on, and only if the
 * user's membership still differs, by one Lua step: when a newer call moved the profile meanwhile,
 * whoever applied that call evaluates it (so a stale evaluation never overwrites a newer one), and
 * when two passes evaluate the same version only one of them changes anything. The same step puts
 * the change in the outbox; the change's identify calls are queued next and only then is the
 * outbox entry cleared, so a crash in between leaves an entry that the periodic sync queues again
 * (with the same job ids, so nothing is delivered twice within the dedupe window).
 */
import type { RedisClient } from '@eventrelay/runtime';
import { parsePassState, type PassState } from '@eventrelay/config';
import { execAll } from '@eventrelay/runtime';
import { configKeys, profileKeys } from '@eventrelay/stores';
import type { Desired, Transition } from '../domain/membership.js';

// KEYS: profile, config audiences hash, then members and outbox of each audience.
// ARGV: expected profile version, userId, at, then audienceId, want (0|1), transitionId of each.
// Returns the (1-based) positions of the audiences whose membership changed, or -1 when the
// profile is not at the expected version. An audience deleted meanwhile is left alone.
const COMMIT = `
if (redis.call('HGET', KEYS[1], 'v') or '0') ~= ARGV[1] then return -1 end
local changed = {}
for i = 1, (#KEYS - 2) / 2 do
  local a = 3 * i + 1
  if redis.call('HEXISTS', KEYS[2], ARGV[a]) == 1 then
    local members, outbox = KEYS[1 + 2 * i], KEYS[2 + 2 * i]
    local want = ARGV[a + 1]
    if tostring(redis.call('SISMEMBER', members, ARGV[2])) ~= want then
      if want == '1' then redis.call('SADD', members, ARGV[2]) else redis.call('SREM', members, ARGV[2]) end
      redis.call('HSET', outbox, ARGV[2], want .. ' ' .. ARGV[a + 2] .. ' ' .. ARGV[3])
      changed[#changed + 1] = i
    end
  end
end
return changed
`;

// KEYS: outbox. ARGV: userId, the entry as committed. Clears it unless a newer change replaced it.
const CLEAR = `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0
`;

// KEYS: config audiences hash, state. ARGV: audienceId, then field/value pairs. A pass of an
// audience deleted meanwhile must not bring its state key back.
const SAVE_STATE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], unpack(ARGV, 2))
return 1
`;

export interface Proposal extends Desired {
  /** Used only if the change is committed. */
  readonly transitionId: string;
}

export class MembershipStore {
  private readonly keys: ReturnType<typeof profileKeys>;
  private readonly audiencesKey: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = profileKeys(prefix);
    this.audiencesKey = configKeys(prefix).audiences;
  }

  /** Commits the proposals that change membership; undefined when the profile moved on. */
  async commit(userId: string, version: number, proposals: readonly Proposal[], at: number): Promise<Transition[] | undefined> {
    if (proposals.length === 0) return [];
    const keys = [
      this.keys.profile(userId),
      this.audiencesKey,
      ...proposals.flatMap((p) => [this.keys.members(p.audienceId), this.keys.outbox(p.audienceId)]),
    ];
    const args = [String(version), userId, String(at), ...proposals.flatMap((p) => [p.audienceId, p.member ? '1' : '0', p.transitionId])];
    const result = (await this.redis.eval(COMMIT, keys.length, ...keys, ...args)) as number | number[];
    if (!Array.isArray(result)) return undefined;
    return result.map((i) => {
      const p = proposals[i - 1] as Proposal;
      return { audienceId: p.audienceId, userId, member: p.member, transitionId: p.transitionId, at };
    });
  }

  /** The transitions' calls are on the delivery queue: their outbox entries go. */
  async clear(transitions: readonly Transition[]): Promise<void> {
    if (transitions.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const t of transitions) pipeline.eval(CLEAR, 1, this.keys.outbox(t.audienceId), t.userId, outboxEntry(t));
    await execAll(pipeline);
  }

  /** Outbox entries older than `before` (epoch ms): changes whose calls may never have been queued. */
  async stranded(audienceId: string, before: number): Promise<Transition[]> {
    const found: Transition[] = [];
    const stream = this.redis.hscanStream(this.keys.outbox(audienceId), { count: 500 });
    for await (const chunk of stream as AsyncIterable<string[]>) {
      for (let i = 0; i + 1 < chunk.length; i += 2) {
        const [want, transitionId, at] = (chunk[i + 1] as string).split(' ');
        if (Number(at) < before && transitionId)
          found.push({ audienceId, userId: chunk[i] as string, member: want === '1', transitionId, at: Number(at) });
      }
    }
    return found;
  }

  async memberCount(audienceId: string): Promise<number> {
    return this.redis.scard(this.keys.members(audienceId));
  }

  /** Removes the users from every audience and its outbox (a deletion regulation). */
  async erase(userIds: readonly string[], audienceIds: readonly string[]): Promise<void> {
    if (userIds.length === 0 || audienceIds.length === 0) return;
    const tx = this.redis.multi();
    for (const id of audienceIds) {
      tx.srem(this.keys.members(id), ...userIds);
      tx.hdel(this.keys.outbox(id), ...userIds);
    }
    await tx.exec();
  }

  async passState(audienceId: string): Promise<PassState> {
    return parsePassState(await this.redis.hgetall(this.keys.state(audienceId)));
  }

  /** Returns false when the audience no longer exists (nothing is written then). */
  async savePassState(audienceId: string, state: PassState): Promise<boolean> {
    const pairs = Object.entries(state).flatMap(([k, v]) => (v === undefined ? [] : [k, String(v)]));
    if (pairs.length === 0) return true;
    return (await this.redis.eval(SAVE_STATE, 2, this.audiencesKey, this.keys.state(audienceId), audienceId, ...pairs)) === 1;
  }
}

function outboxEntry(t: Transition): string {
  return `${t.member ? '1' : '0'} ${t.transitionId} ${t.at}`;
}
