/**
 * Deletion receipts (GET /admin/v1/regulations/:id, docs/spec.md §6): per regulation and
 * destination, how many delete notices were planned and what became of each. Two hashes per
 * regulation:
 *   `<prefix>:reg:receipts:<regulationId>`  "<destinationId>:<notices|delivered|deadLettered|dropped>" → count;
 *                                           kept as long as the regulation record (for good)
 *   `<prefix>:reg:notices:<regulationId>`   "<destinationId>:<messageId>" → the notice's state
 *                                           (planned, or its outcome); expires NOTICE_STATE_TTL_S
 *                                           after its last change
 * The per-notice state is what makes every count exact against repeats: the regulation job
 * replanning a page (a retried job), a delivery job run again after a crash, a replayed dead
 * letter. A notice is counted once when planned, and under one outcome at a time; only notices
 * planned here are counted, so one whose state expired changes nothing. No subject id is kept: a
 * notice's messageId holds a digest of its user.
 */
import type { RedisClient } from '@eventrelay/runtime';
import { defineScript } from '@eventrelay/runtime';
import type { DeletionReceipt } from '@eventrelay/config';
import { profileKeys } from './profile-keys.js';

export type NoticeOutcome = 'delivered' | 'deadLettered' | 'dropped';

/** A delete notice: the destination it goes to and its messageId (unique within the regulation). */
interface NoticeRef {
  readonly destinationId: string;
  readonly messageId: string;
}

/**
 * How long a notice's state is kept after its last change: its outcome can still change while it
 * waits, retries (RETRY_WINDOW_MS, at most 7 days) or lies in the dead letters until an operator
 * replays it. 30 days, as long as the failed regulation jobs BullMQ keeps; a notice replayed later
 * is delivered but no longer moves the receipt.
 */
const NOTICE_STATE_TTL_S = 30 * 86_400;

/** Notices per script call: a regulation page is 500 users × sources × destinations. */
const CHUNK = 1000;

// KEYS: counts, states. ARGV: TTL (s), then per notice its destinationId and messageId. A notice not
// planned before becomes planned and counts once.
const PLAN = `
for i = 2, #ARGV, 2 do
  if redis.call('HSETNX', KEYS[2], ARGV[i] .. ':' .. ARGV[i + 1], 'planned') == 1 then
    redis.call('HINCRBY', KEYS[1], ARGV[i] .. ':notices', 1)
  end
end
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 0
`;

// KEYS: counts, states. ARGV: TTL (s), the outcome, then per notice its destinationId and
// messageId. A planned notice moves to the outcome, its counts with it; delivered is final (the
// receiver had it); a notice never planned here (or whose state expired) is left alone.
const SETTLE = `
local outcome = ARGV[2]
local changed = 0
for i = 3, #ARGV, 2 do
  local field = ARGV[i] .. ':' .. ARGV[i + 1]
  local old = redis.call('HGET', KEYS[2], field)
  if old and old ~= outcome and old ~= 'delivered' then
    if old ~= 'planned' then redis.call('HINCRBY', KEYS[1], ARGV[i] .. ':' .. old, -1) end
    redis.call('HSET', KEYS[2], field, outcome)
    redis.call('HINCRBY', KEYS[1], ARGV[i] .. ':' .. outcome, 1)
    changed = changed + 1
  end
end
if changed > 0 then redis.call('EXPIRE', KEYS[2], ARGV[1]) end
return changed
`;

/** The scripts, defined on the connection (sent as EVALSHA). */
interface ReceiptCommands {
  planNotices(numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  settleNotices(numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

export class DeletionReceipts {
  private readonly scripts: ReceiptCommands;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {
    defineScript(redis, 'planNotices', PLAN);
    defineScript(redis, 'settleNotices', SETTLE);
    this.scripts = redis as unknown as ReceiptCommands;
  }

  /** Counts the notices as planned, each once however often it is planned. */
  async plan(regulationId: string, notices: readonly NoticeRef[]): Promise<void> {
    const keys = this.keys(regulationId);
    for (let i = 0; i < notices.length; i += CHUNK) {
      const args = notices.slice(i, i + CHUNK).flatMap((n) => [n.destinationId, n.messageId]);
      await this.scripts.planNotices(2, ...keys, NOTICE_STATE_TTL_S, ...args);
    }
  }

  /** Records the outcome of planned notices of one regulation; returns how many changed. */
  async settle(regulationId: string, outcome: NoticeOutcome, notices: readonly NoticeRef[]): Promise<number> {
    if (notices.length === 0) return 0;
    const args = notices.flatMap((n) => [n.destinationId, n.messageId]);
    return Number(await this.scripts.settleNotices(2, ...this.keys(regulationId), NOTICE_STATE_TTL_S, outcome, ...args));
  }

  /** The counts per destination, by destination id; none before a notice was planned. */
  async read(regulationId: string): Promise<Omit<DeletionReceipt, 'pending'>[]> {
    const fields = await this.redis.hgetall(this.keys(regulationId)[0]);
    const byDestination = new Map<string, Omit<DeletionReceipt, 'pending'>>();
    for (const [field, value] of Object.entries(fields)) {
      const at = field.lastIndexOf(':');
      const destinationId = field.slice(0, at);
      const what = field.slice(at + 1);
      if (what !== 'notices' && what !== 'delivered' && what !== 'deadLettered' && what !== 'dropped') continue;
      let counts = byDestination.get(destinationId);
      if (!counts) byDestination.set(destinationId, (counts = { destinationId, notices: 0, delivered: 0, deadLettered: 0, dropped: 0 }));
      counts[what] = Number(value);
    }
    return [...byDestination.values()].sort((a, b) => (a.destinationId < b.destinationId ? -1 : a.destinationId > b.destinationId ? 1 : 0));
  }

  private keys(regulationId: string): [string, string] {
    const keys = profileKeys(this.prefix);
    return [keys.receipts(regulationId), keys.noticeStates(regulationId)];
  }
}
