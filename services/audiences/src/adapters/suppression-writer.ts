/**
 * Writes SUPPRESS regulations into the list the router reads (`<prefix>:reg:suppressed-users`,
 * userId → `{}` for every source or `{"sourceIds":[...]}`). A user suppressed before keeps what
 * was suppressed then: the sources are merged, and "every source" wins.
 */
import { asKeyspace, type Keyspace } from '@eventrelay/config';
import type { RedisClient } from '@eventrelay/runtime';
import { ShardCounts, configKeys } from '@eventrelay/stores';

// KEYS: the hash. ARGV: the new entry's sourceIds as JSON ('' = every source), then userIds.
const MERGE = `
local all = ARGV[1] == ''
local new = {}
if not all then new = cjson.decode(ARGV[1]) end
for i = 2, #ARGV do
  local old = redis.call('HGET', KEYS[1], ARGV[i])
  local entry = '{}'
  if not all then
    local merged, seen = {}, {}
    local ok, decoded = false, nil
    if old then ok, decoded = pcall(cjson.decode, old) end
    if old and not (ok and type(decoded) == 'table' and type(decoded.sourceIds) == 'table') then
      merged = nil
    else
      if old then for _, s in ipairs(decoded.sourceIds) do if not seen[s] then seen[s] = true; merged[#merged + 1] = s end end end
      for _, s in ipairs(new) do if not seen[s] then seen[s] = true; merged[#merged + 1] = s end end
    end
    if merged then entry = cjson.encode({sourceIds = merged}) end
  end
  redis.call('HSET', KEYS[1], ARGV[i], entry)
end
return #ARGV - 1
`;

export class SuppressionWriter {
  private readonly key: string;
  private readonly copies: ShardCounts;

  constructor(
    private readonly redis: RedisClient,
    /** EVENTRELAY_PREFIX, or its shards (the router reads the count's copy on its route shard). */
    where: string | Keyspace,
  ) {
    const keys = asKeyspace(where);
    this.key = configKeys(keys.home).suppressedUsers;
    this.copies = new ShardCounts(redis, keys, 'suppressed');
  }

  /**
   * `sourceIds` undefined: every source. Resolves once every shard's copy of the count has it, so
   * the regulation is reported finished only after a route job on any shard would see it.
   */
  async suppress(userIds: readonly string[], sourceIds: readonly string[] | undefined): Promise<void> {
    if (userIds.length === 0) return;
    await this.redis.eval(MERGE, 1, this.key, sourceIds === undefined ? '' : JSON.stringify(sourceIds), ...userIds);
    await this.copies.publish((tx) => tx.hlen(this.key));
  }
}
