/**
 * Profiles in Redis: one hash per user (domain/profile.ts names the fields) and a lexically
 * ordered index of every userId, which full passes page through. A call is applied by one Lua
 * step, so concurrent calls of one user never lose each other's updates, and a call whose
 * messageId was applied lately (a retried job) is applied once.
 *
 * Footprint, bounded per user and source: traits at most PROFILE_MAX_TRAIT_BYTES (key plus JSON
 * value; a new or longer value that would pass it is left out), at most PROFILE_MAX_EVENTS event
 * names with one counter each, and day buckets only for the latest PROFILE_DAYS_KEPT days of each.
 *
 * Idle expiry (AUDIENCES_PROFILE_TTL_DAYS, 0 = never): every write sets the profile hash's TTL
 * again and its time in the `seen` set, so Redis drops a profile nobody wrote for that long even
 * when no sync runs; `expireIdle` then takes its userId out of the index and the `seen` set.
 *
 * Profiles per source (AUDIENCES_MAX_PROFILES_PER_SOURCE, 0 = no cap): while there is a cap, every
 * write also puts the profile in its source's sorted set (profileId → the source's last write), so
 * the number a source holds is one ZCARD. The count is approximate, and errs towards letting
 * calls in: a profile leaves its source's set when it is erased, and when the source has not
 * written it for the idle TTL (`expireIdleSource`, even if another source keeps the profile alive;
 * the source's next call finds its part and puts it back); profiles written before the cap
 * existed, or while it was 0, are counted from their source's next write. It runs high only for
 * the profiles Redis dropped at their TTL since the last periodic sync.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '@eventrelay/runtime';
import type { ProfileCall } from '@eventrelay/config';
import { execAll } from '@eventrelay/runtime';
import { profileId, profileKeys } from '@eventrelay/stores';
import { utcDay } from '../domain/profile.js';

export interface ProfileLimits {
  readonly maxTraitBytes: number;
  readonly maxEvents: number;
  readonly daysKept: number;
  /** Idle time after which a profile expires; 0 keeps profiles until a regulation erases them. */
  readonly ttlMs: number;
  /** Profiles one source may hold (AUDIENCES_MAX_PROFILES_PER_SOURCE); 0 = no cap, and no count kept. */
  readonly maxPerSource: number;
}

/** How many recent messageIds a profile remembers, against a retried job counting a call twice. */
const IDS_KEPT = 32;

// KEYS: index, seen, then per candidate its profile and the key it had before long ids were
// digested (its profile again for a short id). ARGV: cutoff, then the candidates' userIds.
// Takes out a candidate only if it was still not written since the cutoff (a write meanwhile
// raised its time), and deletes its hash in case Redis has not dropped it yet. Returns those.
const EXPIRE = `
local gone = {}
for i = 2, #ARGV do
  local at = redis.call('ZSCORE', KEYS[2], ARGV[i])
  if at and tonumber(at) <= tonumber(ARGV[1]) then
    redis.call('DEL', KEYS[2 * i - 1], KEYS[2 * i])
    redis.call('ZREM', KEYS[1], ARGV[i])
    redis.call('ZREM', KEYS[2], ARGV[i])
    gone[#gone + 1] = ARGV[i]
  end
end
return gone
`;

// KEYS: profile, index, seen, the source's profiles, the key the profile had before long ids were
// digested (the profile again for a short id). ARGV: userId, sourceId, digest, kind, at, day,
// maxTraitBytes, maxEvents, daysKept, idsKept, whether to return the fields ('1' or '0'), ttlMs
// (0 = never), now, the profileId to count in the source's profiles ('' without a cap), whether to
// move a profile from its former key ('1' or '0'), then for identify trait key/JSON value pairs,
// for track the event name.
// Returns {applied (0 or 1), fields left out by a cap, the profile's fields (HGETALL) or nothing}.
const APPLY = `
local p = KEYS[1]
if ARGV[15] == '1' and redis.call('EXISTS', p) == 0 and redis.call('EXISTS', KEYS[5]) == 1 then
  redis.call('RENAME', KEYS[5], p)
end
local ids = redis.call('HGET', p, 'ids') or ''
local function fields() if ARGV[11] == '1' then return redis.call('HGETALL', p) end return {} end
if string.find(' ' .. ids .. ' ', ' ' .. ARGV[3] .. ' ', 1, true) then return {0, 0, fields()} end
ids = ARGV[3] .. ((ids == '') and '' or (' ' .. ids))
local keep = tonumber(ARGV[10]) * (#ARGV[3] + 1) - 1
if #ids > keep then ids = string.sub(ids, 1, keep) end
local src = ARGV[2]
local dropped = 0
if ARGV[4] == 'identify' then
  local tb = 'tb:' .. src
  local bytes = tonumber(redis.call('HGET', p, tb) or '0')
  local cap = tonumber(ARGV[7])
  for i = 16, #ARGV, 2 do
    local f = 't:' .. src .. ':' .. ARGV[i]
    local old = redis.call('HGET', p, f)
    local delta
    if old then delta = #ARGV[i + 1] - #old else delta = #ARGV[i] + #ARGV[i + 1] end
    if bytes + delta <= cap then
      redis.call('HSET', p, f, ARGV[i + 1])
      bytes = bytes + delta
    else
      dropped = dropped + 1
    end
  end
  redis.call('HSET', p, tb, bytes, 'ta:' .. src, ARGV[5])
else
  local f = 'e:' .. src .. ':' .. ARGV[16]
  local old = redis.call('HGET', p, f)
  if not old then
    local en = 'en:' .. src
    if tonumber(redis.call('HGET', p, en) or '0') < tonumber(ARGV[8]) then
      redis.call('HINCRBY', p, en, 1)
      old = '0'
    else
      dropped = 1
    end
  end
  if old then
    local day = tonumber(ARGV[6])
    local total, buckets, found, newest, first = 0, {}, false, day, true
    for tok in string.gmatch(old, '%S+') do
      if first then
        total = tonumber(tok)
        first = false
      else
        local d, c = string.match(tok, '^(%d+):(%d+)$')
        d, c = tonumber(d), tonumber(c)
        if d == day then c = c + 1; found = true end
        if d > newest then newest = d end
        buckets[#buckets + 1] = {d, c}
      end
    end
    if not found then buckets[#buckets + 1] = {day, 1} end
    table.sort(buckets, function(a, b) return a[1] > b[1] end)
    local parts = {tostring(total + 1)}
    for _, b in ipairs(buckets) do
      if b[1] > newest - tonumber(ARGV[9]) then parts[#parts + 1] = b[1] .. ':' .. b[2] end
    end
    redis.call('HSET', p, f, table.concat(parts, ' '))
  end
end
redis.call('HSET', p, 'ids', ids)
redis.call('HINCRBY', p, 'v', 1)
redis.call('ZADD', KEYS[2], 0, ARGV[1])
if tonumber(ARGV[12]) > 0 then
  redis.call('PEXPIRE', p, ARGV[12])
  redis.call('ZADD', KEYS[3], ARGV[13], ARGV[1])
else
  redis.call('PERSIST', p)
  redis.call('ZREM', KEYS[3], ARGV[1])
end
if ARGV[14] ~= '' then redis.call('ZADD', KEYS[4], ARGV[13], ARGV[14]) end
return {1, dropped, fields()}
`;

// KEYS: the source's profiles, then per user its profile and its former key (the profile again
// for a short id). ARGV: sourceId, then each user's profileId. Returns {profiles the source holds,
// then 1 or 0 per user: the source holds theirs}. A profile the source wrote before it was counted
// (no entry yet), or still under its former key, is known by its fields.
const STANDING = `
local out = {redis.call('ZCARD', KEYS[1])}
local ta, en = 'ta:' .. ARGV[1], 'en:' .. ARGV[1]
local function has(key) return redis.call('HEXISTS', key, ta) == 1 or redis.call('HEXISTS', key, en) == 1 end
for i = 2, #ARGV do
  local known = redis.call('ZSCORE', KEYS[1], ARGV[i]) or has(KEYS[2 * i - 2]) or has(KEYS[2 * i - 1])
  out[i] = known and 1 or 0
end
return out
`;

// KEYS: the source's profiles. ARGV: cutoff, most to remove. Its lowest scores are its oldest
// writes, so the entries idle since the cutoff are the first ranks. Returns how many went.
const EXPIRE_SOURCE = `
local n = redis.call('ZCOUNT', KEYS[1], '-inf', ARGV[1])
if n > tonumber(ARGV[2]) then n = tonumber(ARGV[2]) end
if n > 0 then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - 1) end
return n
`;

export interface Applied {
  /** Calls applied; a call applied before (a retried job) is not counted again. */
  readonly applied: number;
  /** Traits or event names left out because a cap was reached. */
  readonly dropped: number;
  /** The profile's fields after the last call. */
  readonly fields: Record<string, string>;
}

export class ProfileStore {
  private readonly keys: ReturnType<typeof profileKeys>;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly limits: ProfileLimits,
    private readonly clock: () => number = Date.now,
  ) {
    this.keys = profileKeys(prefix);
  }

  /**
   * Applies one user's calls in order; only the last step reads the whole profile back, which is
   * all the evaluation that follows needs.
   */
  async applyAll(sourceId: string, calls: readonly ProfileCall[]): Promise<Applied> {
    let applied = 0;
    let dropped = 0;
    let fields: Record<string, string> = {};
    for (const [i, call] of calls.entries()) {
      const last = i === calls.length - 1;
      const result = await this.apply(sourceId, call, last);
      applied += result.applied ? 1 : 0;
      dropped += result.dropped;
      if (last) fields = result.fields;
    }
    return { applied, dropped, fields };
  }

  private async apply(
    sourceId: string,
    call: ProfileCall,
    withFields: boolean,
  ): Promise<{ applied: boolean; dropped: number; fields: Record<string, string> }> {
    // An unreadable timestamp (ingest normalizes them, so only a hand-made job) counts as 1970.
    const at = Date.parse(call.timestamp) || 0;
    const digest = createHash('sha1').update(`${sourceId}\n${call.messageId}`).digest('hex').slice(0, 12);
    const payload =
      call.type === 'identify' ? Object.entries(call.traits ?? {}).flatMap(([k, v]) => [k, JSON.stringify(v ?? null)]) : [call.event ?? ''];
    const { maxTraitBytes, maxEvents, daysKept, ttlMs, maxPerSource } = this.limits;
    const profile = this.keys.profile(call.userId);
    const former = this.keys.formerProfile(call.userId);
    const [applied, dropped, flat] = (await this.redis.eval(
      APPLY,
      5,
      profile,
      this.keys.index,
      this.keys.seen,
      this.keys.sourceProfiles(sourceId),
      former ?? profile,
      call.userId,
      sourceId,
      digest,
      call.type,
      at,
      utcDay(at),
      maxTraitBytes,
      maxEvents,
      daysKept,
      IDS_KEPT,
      withFields ? '1' : '0',
      ttlMs,
      this.clock(),
      maxPerSource > 0 ? profileId(call.userId) : '',
      former === undefined ? '0' : '1',
      ...payload,
    )) as [number, number, string[]];
    return { applied: applied === 1, dropped, fields: pairs(flat) };
  }

  /** The users after `after` (exclusive; '' from the start), in lexical order. */
  async userIdsAfter(after: string, count: number): Promise<string[]> {
    return this.redis.zrangebylex(this.keys.index, after === '' ? '-' : `(${after}`, '+', 'LIMIT', 0, count);
  }

  /** Each user's fields (empty when the user has no profile). */
  async read(userIds: readonly string[]): Promise<Record<string, string>[]> {
    if (userIds.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of userIds) pipeline.hgetall(this.keys.profile(id));
    return (await execAll(pipeline)) as Record<string, string>[];
  }

  /**
   * How many profiles the source holds, and whether it holds each user's: what the cap decides on
   * (domain/profile-cap.ts). One script, whatever the number of users. Undefined without a cap.
   */
  async standing(sourceId: string, userIds: readonly string[]): Promise<{ held: number; known: boolean[] } | undefined> {
    if (this.limits.maxPerSource <= 0) return undefined;
    const [held, ...known] = (await this.redis.eval(
      STANDING,
      1 + 2 * userIds.length,
      this.keys.sourceProfiles(sourceId),
      ...userIds.flatMap((id) => [this.keys.profile(id), this.keys.formerProfile(id) ?? this.keys.profile(id)]),
      sourceId,
      ...userIds.map(profileId),
    )) as number[];
    return { held: held ?? 0, known: known.map((k) => k === 1) };
  }

  /**
   * Erases the users' profiles (their former keys too) and takes them out of the counts of
   * `sourceIds` (every source there is); returns how many had one.
   */
  async erase(userIds: readonly string[], sourceIds: readonly string[]): Promise<number> {
    if (userIds.length === 0) return 0;
    const tx = this.redis.multi();
    // A profile is under one of its two keys at most: a write moves it from the former one.
    tx.del(...userIds.flatMap((id) => this.keysOf(id)));
    tx.zrem(this.keys.index, ...userIds);
    tx.zrem(this.keys.seen, ...userIds);
    const ids = userIds.map(profileId);
    for (const sourceId of sourceIds) tx.zrem(this.keys.sourceProfiles(sourceId), ...ids);
    const [deleted] = await execAll(tx);
    return Number(deleted ?? 0);
  }

  /**
   * Takes up to `count` users whose profile was not written for the idle TTL out of the index
   * (and deletes what is left of their profile); returns them. Nothing when expiry is off.
   */
  async expireIdle(count: number): Promise<string[]> {
    if (this.limits.ttlMs <= 0) return [];
    const cutoff = this.clock() - this.limits.ttlMs;
    const candidates = await this.redis.zrangebyscore(this.keys.seen, '-inf', cutoff, 'LIMIT', 0, count);
    if (candidates.length === 0) return [];
    const keys = [
      this.keys.index,
      this.keys.seen,
      ...candidates.flatMap((id) => [this.keys.profile(id), this.keys.formerProfile(id) ?? this.keys.profile(id)]),
    ];
    return (await this.redis.eval(EXPIRE, keys.length, ...keys, cutoff, ...candidates)) as string[];
  }

  /**
   * Takes out of a source's count up to `count` profiles it has not written for the idle TTL;
   * returns how many. Nothing when expiry is off. Also while the cap is off, so a count kept before
   * is not stale when the cap is set again.
   */
  async expireIdleSource(sourceId: string, count: number): Promise<number> {
    if (this.limits.ttlMs <= 0) return 0;
    return Number(await this.redis.eval(EXPIRE_SOURCE, 1, this.keys.sourceProfiles(sourceId), this.clock() - this.limits.ttlMs, count));
  }

  count(): Promise<number> {
    return this.redis.zcard(this.keys.index);
  }

  /** The user's profile key, and the former one of a long id. */
  private keysOf(userId: string): string[] {
    const former = this.keys.formerProfile(userId);
    return former === undefined ? [this.keys.profile(userId)] : [this.keys.profile(userId), former];
  }
}

function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] as string] = flat[i + 1] as string;
  return out;
}
