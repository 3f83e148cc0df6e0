/**
 * Erasing one user's calls from the dead letters (a deletion regulation, docs/spec.md §6). Dead
 * letters are keyed by letter id, not by user, so a purge reads every letter of the destination:
 * bounded by DELIVERY_DEAD_LETTER_MAX_PER_DESTINATION and DELIVERY_DEAD_LETTER_MAX_BYTES_PER_DESTINATION,
 * done once per destination and page of subjects. The attempt log holds no userId or call body (messageId, URL, outcome), so there is
 * nothing of the user to erase there.
 */
import type { RedisClient } from '@eventrelay/runtime';
import type { Keyspace } from '@eventrelay/config';
import { DEAD_BYTES_LOWER, deliveryKeys } from './delivery-records.js';

// KEYS: index, data, by-message, bytes. ARGV: destinationId, how many sourceIds (n), the n
// sourceIds, then the userIds. Removes the letters of those users' calls from those sources, in
// one step so the index, the data, the messageId index and the destination's byte total never
// disagree. Delete notices are kept: they carry only the userId and are how the deletion reaches
// the receiver (an operator may still replay them).
const PURGE_USERS = `${DEAD_BYTES_LOWER}
local n = tonumber(ARGV[2])
local sources, users = {}, {}
for i = 3, n + 2 do sources[ARGV[i]] = true end
for i = n + 3, #ARGV do users[ARGV[i]] = true end
local removed, bytes = 0, 0
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do
  local ok, letter = pcall(cjson.decode, all[i + 1])
  local job = ok and type(letter) == 'table' and letter.job
  local call = type(job) == 'table' and job.call
  if type(call) == 'table' and call.type ~= 'delete' and call.userId ~= nil and users[tostring(call.userId)] and sources[tostring(job.sourceId)] then
    bytes = bytes + string.len(all[i + 1])
    redis.call('HDEL', KEYS[2], all[i])
    redis.call('ZREM', KEYS[1], all[i])
    if call.messageId and redis.call('HGET', KEYS[3], call.messageId) == all[i] then redis.call('HDEL', KEYS[3], call.messageId) end
    removed = removed + 1
  end
end
lowerDeadBytes(KEYS[4], ARGV[1], bytes)
return removed
`;

/**
 * Removes the dead letters of the users' calls from the given sources to one destination; returns
 * how many.
 */
export async function purgeUserDeadLetters(
  redis: RedisClient,
  prefix: string | Keyspace,
  destinationId: string,
  sourceIds: readonly string[],
  userIds: readonly string[],
): Promise<number> {
  if (sourceIds.length === 0 || userIds.length === 0) return 0;
  const keys = deliveryKeys(prefix);
  return Number(
    await redis.eval(
      PURGE_USERS,
      4,
      keys.deadIndex(destinationId),
      keys.deadData(destinationId),
      keys.deadByMessage(destinationId),
      keys.deadBytes(destinationId),
      destinationId,
      sourceIds.length,
      ...sourceIds,
      ...userIds,
    ),
  );
}
