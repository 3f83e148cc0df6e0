/**
 * Replay progress (GET /admin/v1/destinations/:id/replays/:replayId): what became of the calls one
 * replay put back on the delivery queue. Two hashes per replay, both expiring REPLAY_TTL_S after
 * the replay began:
 *   `<prefix>:replay:<replayId>`        destinationId, startedAt, replayed, delivered, deadLettered
 *   `<prefix>:replay-calls:<replayId>`  "<sourceId>:<messageId>" → planned, delivered or deadLettered
 * As with the deletion receipts, the per-call state makes the counts exact against repeats (a
 * deliver job run again after a crash records the same outcome twice): each call counts once when
 * planned and under one outcome at a time, delivered being final.
 */
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '@eventrelay/runtime';
import { asKeyspace, type Keyspace } from '@eventrelay/config';
import { defineScript } from '@eventrelay/runtime';
import type { ReplayProgress } from '@eventrelay/config';

export type ReplayOutcome = 'delivered' | 'deadLettered';

/** A replayed call: the source it came from and its messageId (one dead letter per pair). */
interface ReplayedCall {
  readonly sourceId: string;
  readonly messageId: string;
}

/** How long a replay's progress is kept: long enough to cover a retry window and then some. */
const REPLAY_TTL_S = 7 * 86_400;

// KEYS: progress, states. ARGV: TTL (s), then per call its field. A call not planned before counts once.
const PLAN = `
local added = 0
for i = 2, #ARGV do
  if redis.call('HSETNX', KEYS[2], ARGV[i], 'planned') == 1 then added = added + 1 end
end
if added > 0 then redis.call('HINCRBY', KEYS[1], 'replayed', added) end
redis.call('EXPIRE', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[1])
return added
`;

// KEYS: progress, states. ARGV: the outcome, then per call its field. A planned call moves to the
// outcome, its counts with it; delivered is final; a call not planned here (or expired) is left alone.
// Once the progress hash has expired nothing is counted: HINCRBY would make it again, without a TTL.
const SETTLE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local outcome = ARGV[1]
local changed = 0
for i = 2, #ARGV do
  local old = redis.call('HGET', KEYS[2], ARGV[i])
  if old and old ~= outcome and old ~= 'delivered' then
    if old ~= 'planned' then redis.call('HINCRBY', KEYS[1], old, -1) end
    redis.call('HSET', KEYS[2], ARGV[i], outcome)
    redis.call('HINCRBY', KEYS[1], outcome, 1)
    changed = changed + 1
  end
end
return changed
`;

interface ReplayCommands<R> {
  planReplayCalls(numKeys: number, ...args: (string | number)[]): R;
  settleReplayCalls(numKeys: number, ...args: (string | number)[]): R;
}

export class ReplayProgressStore {
  private readonly keyspace: Keyspace;

  constructor(
    private readonly redis: RedisClient,
    /** EVENTRELAY_PREFIX, or its shards: a replay's keys are on its destination's shard. */
    where: string | Keyspace,
  ) {
    this.keyspace = asKeyspace(where);
    defineScript(redis, 'planReplayCalls', PLAN);
    defineScript(redis, 'settleReplayCalls', SETTLE);
  }

  /** Opens a replay's record; call before its calls are planned. */
  async begin(replayId: string, destinationId: string, startedAt: string): Promise<void> {
    const [progress] = this.keys(destinationId, replayId);
    await this.redis
      .multi()
      .hset(progress, { destinationId, startedAt, replayed: 0, delivered: 0, deadLettered: 0 })
      .expire(progress, REPLAY_TTL_S)
      .exec();
  }

  /** Counts the calls as replayed, each once; before they are enqueued, so no outcome comes first. */
  async plan(destinationId: string, replayId: string, calls: readonly ReplayedCall[]): Promise<number> {
    if (calls.length === 0) return 0;
    const commands = this.redis as unknown as ReplayCommands<Promise<unknown>>;
    return Number(await commands.planReplayCalls(2, ...this.keys(destinationId, replayId), REPLAY_TTL_S, ...calls.map(field)));
  }

  /** Queues on `tx` (a MULTI made from this store's connection) the outcome of replayed calls. */
  queueSettle(
    tx: ChainableCommander,
    destinationId: string,
    replayId: string,
    outcome: ReplayOutcome,
    calls: readonly ReplayedCall[],
  ): void {
    if (calls.length === 0) return;
    (tx as unknown as ReplayCommands<ChainableCommander>).settleReplayCalls(
      2,
      ...this.keys(destinationId, replayId),
      outcome,
      ...calls.map(field),
    );
  }

  /** The replay's progress, or undefined when it is unknown (or expired). */
  async read(destinationId: string, replayId: string): Promise<ReplayProgress | undefined> {
    const fields = await this.redis.hgetall(this.keys(destinationId, replayId)[0]);
    if (fields['destinationId'] === undefined) return undefined;
    const n = (name: string) => Math.max(0, Number(fields[name] ?? 0));
    const [replayed, delivered, deadLettered] = [n('replayed'), n('delivered'), n('deadLettered')];
    return {
      replayId,
      destinationId: fields['destinationId'],
      startedAt: fields['startedAt'] ?? '',
      replayed,
      delivered,
      deadLettered,
      pending: Math.max(0, replayed - delivered - deadLettered),
    };
  }

  private keys(destinationId: string, replayId: string): [string, string] {
    const prefix = this.keyspace.destinationPrefix(destinationId);
    return [`${prefix}:replay:${replayId}`, `${prefix}:replay-calls:${replayId}`];
  }
}

function field(call: ReplayedCall): string {
  return `${call.sourceId}:${call.messageId}`;
}
