/**
 * A capped log in Redis, newest first: a list trimmed to a maximum length plus a counter of every
 * entry ever pushed. The counter gives each entry a stable sequence number (counter minus its
 * index), so a page cursor stays valid while new entries arrive at the head and old ones are
 * trimmed from the tail. Used for the attempt log, the event debugger and the audit log.
 */
import { Cluster, type ChainableCommander } from 'ioredis';
import { keySlot } from '@eventrelay/config';
import type { RedisClient } from '@eventrelay/runtime';
import { WriteChain } from './write-chain.js';

export function cappedLogKeys(listKey: string): { list: string; seq: string } {
  return { list: listKey, seq: `${listKey}:seq` };
}

/** Queues on `tx` (a MULTI) the commands that push `entries` (oldest first) and trim to `max`. */
export function pushCapped(tx: ChainableCommander, listKey: string, entries: readonly string[], max: number): void {
  if (entries.length === 0) return;
  const keys = cappedLogKeys(listKey);
  tx.lpush(keys.list, ...entries);
  tx.ltrim(keys.list, 0, max - 1);
  tx.incrby(keys.seq, entries.length);
}

// KEYS: list, seq. ARGV: cursor ('' = newest), count. Returns {counter, start index, length, entries}.
// A list written before the counter existed counts as if its entries were the only ones pushed.
const READ_PAGE = `
local len = redis.call('LLEN', KEYS[1])
local c = tonumber(redis.call('GET', KEYS[2]) or '0')
if c < len then c = len end
local start = 0
if ARGV[1] ~= '' then start = c - tonumber(ARGV[1]) end
if start < 0 then start = 0 end
return {c, start, len, redis.call('LRANGE', KEYS[1], start, start + tonumber(ARGV[2]) - 1)}
`;

export interface CappedPage<T> {
  readonly items: T[];
  /** Where the next page starts, or null when the log has no older entries. */
  readonly nextCursor: string | null;
}

export interface ReadCappedOptions<T> {
  readonly limit: number;
  readonly cursor?: string | undefined;
  /** Only entries it accepts are returned. */
  readonly match?: (entry: T) => boolean;
  /**
   * At most this many entries are looked at per call, so a rare filter over a long log costs one
   * bounded read; the page may then hold fewer than `limit` items, with a cursor to go on.
   */
  readonly scanLimit?: number;
}

/** One page, newest first. `cursor` must come from an earlier page (digits only). */
export async function readCapped<T>(redis: RedisClient, listKey: string, options: ReadCappedOptions<T>): Promise<CappedPage<T>> {
  const keys = cappedLogKeys(listKey);
  const scanLimit = Math.max(options.limit, options.scanLimit ?? 5000);
  const items: T[] = [];
  let cursor = options.cursor ?? '';
  let scanned = 0;
  for (;;) {
    const chunk = Math.min(Math.max(options.limit - items.length, 200), scanLimit - scanned);
    const [counter, start, length, entries] = (await redis.eval(READ_PAGE, 2, keys.list, keys.seq, cursor, chunk)) as [
      number,
      number,
      number,
      string[],
    ];
    scanned += entries.length;
    for (let i = 0; i < entries.length; i++) {
      const entry = JSON.parse(entries[i] as string) as T;
      if (options.match && !options.match(entry)) continue;
      items.push(entry);
      if (items.length === options.limit) {
        const next = start + i + 1;
        return { items, nextCursor: next < length ? String(counter - next) : null };
      }
    }
    const next = start + entries.length;
    if (next >= length || entries.length === 0) return { items, nextCursor: null };
    cursor = String(counter - next);
    if (scanned >= scanLimit) return { items, nextCursor: cursor };
  }
}

export interface BatchedLogOptions<T> {
  /** Entries kept per log; older ones are trimmed. */
  readonly max: number;
  /** Entries are written in batches at most this far apart. */
  readonly flushMs?: number;
  /**
   * Entries buffered per log between flushes; older ones are dropped first. Without it nothing is
   * dropped (up to 1000 entries in all, when a flush is started early).
   */
  readonly keepPerLog?: number;
  readonly onError?: (err: unknown) => void;
  /** Turns an entry into what is stored, at flush time (so entries dropped before cost nothing). */
  readonly serialize?: (entry: T) => string;
}

/**
 * Appends to many capped logs, batched: one MULTI per flush with one LPUSH, LTRIM and INCRBY per
 * log, so a log costs a small fraction of a Redis command per entry on a busy path. A crash loses
 * at most the last `flushMs` of entries: these logs are for people, never what guarantees delivery.
 */
export class BatchedCappedLog<T> {
  private pending = new Map<string, T[]>();
  private size = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly writes: WriteChain;

  constructor(
    private readonly redis: RedisClient,
    private readonly options: BatchedLogOptions<T>,
  ) {
    this.writes = new WriteChain(options.onError);
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.options.flushMs ?? 100);
    this.timer.unref();
  }

  append(listKey: string, entry: T): void {
    let list = this.pending.get(listKey);
    if (!list) this.pending.set(listKey, (list = []));
    list.push(entry);
    const keep = this.options.keepPerLog;
    if (keep !== undefined && list.length > keep) list.shift();
    else if (++this.size >= 1000) void this.flush();
  }

  /** Writes what is buffered; resolves when it is in Redis (or the write failed and was reported). */
  flush(): Promise<void> {
    if (this.pending.size === 0) return this.writes.add([]);
    const batch = this.pending;
    this.pending = new Map();
    this.size = 0;
    const serialize = this.options.serialize ?? ((e: T) => JSON.stringify(e));
    // A MULTI stays within one slot on a cluster: one per slot there (logs of destinations on
    // several shards), one in all on a single Redis.
    const bySlot = new Map<number, ChainableCommander>();
    for (const [listKey, entries] of batch) {
      const slot = this.redis instanceof Cluster ? keySlot(listKey) : 0;
      let tx = bySlot.get(slot);
      if (!tx) bySlot.set(slot, (tx = this.redis.multi()));
      pushCapped(tx, listKey, entries.map(serialize), this.options.max);
    }
    return this.writes.add([...bySlot.values()].map((tx) => () => tx.exec()));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
