/**
 * The two logs operators read besides the attempt log: the audit log of admin writes, and the
 * event debugger's ring of the latest calls each source sent (accepted or rejected). Both are
 * capped logs (capped-log.ts) under the key prefix.
 */
import type { RedisClient } from '@eventrelay/runtime';
import { asKeyspace, type AuditEntry, type DebugEvent, type Keyspace } from '@eventrelay/config';
import { BatchedCappedLog, pushCapped, readCapped, type CappedPage } from './capped-log.js';

export function auditLogKey(prefix: string): string {
  return `${prefix}:audit`;
}

/** A source's debug events live on its route shard, beside its intake (EVENTRELAY_SHARDS). */
export function sourceEventsKey(where: string | Keyspace, sourceId: string): string {
  return `${asKeyspace(where).sourcePrefix(sourceId)}:debug:${sourceId}`;
}

export class AuditLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly max = 10_000,
  ) {}

  /** For writes that are not config changes (those are audited by ConfigStore in the same step). */
  async record(entry: AuditEntry): Promise<void> {
    const tx = this.redis.multi();
    pushCapped(tx, auditLogKey(this.prefix), [JSON.stringify(entry)], this.max);
    await tx.exec();
  }

  page(options: { limit: number; cursor?: string | undefined }): Promise<CappedPage<AuditEntry>> {
    return readCapped(this.redis, auditLogKey(this.prefix), options);
  }
}

export interface SourceEventsOptions {
  /** Events kept per source. */
  readonly max: number;
  readonly flushMs?: number;
  readonly onError?: (err: unknown) => void;
  /** Applied to each event when it is written (ingest redacts secrets here). */
  readonly prepare?: (event: DebugEvent) => DebugEvent;
}

/**
 * The event debugger's rings. Ingest records into memory and writes every `flushMs`, keeping only
 * the latest `max` events per source in between, so a busy source costs one small write per flush
 * however many calls it sends.
 */
export class SourceEvents {
  private readonly log: BatchedCappedLog<DebugEvent>;
  /** Resolved once: each source's ring is on its route shard. */
  private readonly keys: Keyspace;

  constructor(
    private readonly redis: RedisClient,
    where: string | Keyspace,
    options: SourceEventsOptions,
  ) {
    this.keys = asKeyspace(where);
    const prepare = options.prepare ?? ((e: DebugEvent) => e);
    this.log = new BatchedCappedLog(redis, {
      max: options.max,
      keepPerLog: options.max,
      flushMs: options.flushMs ?? 250,
      onError: options.onError,
      serialize: (e) => JSON.stringify(prepare(e)),
    });
  }

  start(): void {
    this.log.start();
  }

  record(sourceId: string, event: DebugEvent): void {
    this.log.append(sourceEventsKey(this.keys, sourceId), event);
  }

  flush(): Promise<void> {
    return this.log.flush();
  }

  close(): Promise<void> {
    return this.log.close();
  }

  page(sourceId: string, options: { limit: number; cursor?: string | undefined }): Promise<CappedPage<DebugEvent>> {
    return readCapped(this.redis, sourceEventsKey(this.keys, sourceId), options);
  }

  /**
   * Erases the calls of these users from the source's ring (a deletion regulation). Each entry is
   * replaced in place by one that keeps only its time and outcome, so page cursors stay valid.
   * Returns how many entries were erased.
   */
  async eraseUsers(sourceId: string, userIds: readonly string[]): Promise<number> {
    if (userIds.length === 0) return 0;
    return Number(await this.redis.eval(ERASE_USERS, 1, sourceEventsKey(this.keys, sourceId), ...userIds));
  }
}

// KEYS: the ring. ARGV: userIds. A rejected call's userId may be a number, so it is compared as text.
const ERASE_USERS = `
local users = {}
for i = 1, #ARGV do users[ARGV[i]] = true end
local erased = 0
local entries = redis.call('LRANGE', KEYS[1], 0, -1)
for i, raw in ipairs(entries) do
  local ok, e = pcall(cjson.decode, raw)
  if ok and type(e) == 'table' and type(e.call) == 'table' and e.call.userId ~= nil and users[tostring(e.call.userId)] then
    redis.call('LSET', KEYS[1], i - 1, cjson.encode({at = e.at, outcome = e.outcome, message = 'erased by a deletion regulation'}))
    erased = erased + 1
  end
end
return erased
`;
