/**
 * A destination's `maxRequestsPerSecond` across every webhook-delivery process: a job reserves
 * the slots of its round's requests in Redis before sending (GCRA: the key holds when the
 * destination's next free slot starts), so the processes' requests never together start faster
 * than the setting. One script call per job round, only for destinations that set the limit; the
 * key lives on the destination's deliver shard and expires once idle.
 */
import type { Keyspace } from '@eventrelay/config';
import { defineScript, type RedisClient } from '@eventrelay/runtime';

/**
 * KEYS[1] the destination's next free slot (ms, Redis's clock); ARGV: slot length (ms), slots
 * wanted, the longest wait accepted (ms), the earliest the first may start (ms from now). Returns
 * {1, wait} when the slots were taken (the first starts `wait` ms from now, the others one slot
 * apart), {0, wait} when the first would start later than accepted (nothing taken).
 */
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local slot = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local free = tonumber(redis.call('GET', KEYS[1]) or '0')
local start = math.max(free, now + tonumber(ARGV[4]))
local wait = start - now
if wait > tonumber(ARGV[3]) then return {0, wait} end
local after = start + n * slot
redis.call('SET', KEYS[1], tostring(after), 'PX', math.ceil(after - now) + 1000)
return {1, wait}
`;

export interface Reservation {
  /** False: nothing was taken; come back in `waitMs`. */
  readonly granted: boolean;
  /** How long until the first slot starts. */
  readonly waitMs: number;
}

export class RateReservations {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
  ) {
    defineScript(redis, 'reserveRate', RESERVE);
  }

  /** `notBeforeMs`: the first slot starts no sooner than this many ms from now. */
  async reserve(destinationId: string, perSecond: number, requests: number, maxWaitMs: number, notBeforeMs = 0): Promise<Reservation> {
    const key = `${this.keys.destinationPrefix(destinationId)}:rate-slots:${destinationId}`;
    const script = this.redis as unknown as { reserveRate(...args: (string | number)[]): Promise<[number, number]> };
    const [granted, waitMs] = await script.reserveRate(1, key, 1000 / perSecond, requests, maxWaitMs, Math.max(0, Math.round(notBeforeMs)));
    return { granted: granted === 1, waitMs: Number(waitMs) };
  }
}
