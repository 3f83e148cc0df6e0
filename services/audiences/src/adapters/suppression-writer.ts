/**
 * Writes SUPPRESS regulations into the list the router reads (`<prefix>:reg:suppressed-users`,
 * userId → `{}` for every source or `{"sourceIds":[...]}`). A user suppressed before keeps what
 * was suppressed then: the sources are merged, and "every source" wins.
 */
import type { RedisClient } from '@eventrelay/runtime';
import { configKeys } from '@eventrelay/stores';

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

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.key = configKeys(prefix).suppressedUsers;
  }

  /** `sourceIds` undefined: every source. */
  async suppress(userIds: readonly string[], sourceIds: readonly string[] | undefined): Promise<void> {
    if (userIds.length === 0) return;
    await this.redis.eval(MERGE, 1, this.key, sourceIds === undefined ? '' : JSON.stringify(sourceIds), ...userIds);
  }
}
