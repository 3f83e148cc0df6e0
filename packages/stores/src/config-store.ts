/**
 * Sources, destinations and audiences live in Redis so that every process sees a change within
 * seconds without a restart. Writers bump a version counter in the same atomic step; readers poll
 * that one key and reload only when it moved. Each entity is one JSON value, so no reader ever
 * sees half of one.
 */
import { readFile } from 'node:fs/promises';
import type { RedisClient } from '@eventrelay/runtime';
import {
  ConfigError,
  keyspace,
  parseConfigText,
  planConfigFile,
  planUpsert,
  type Audience,
  type AuditEntry,
  type ConfigChange,
  type ConfigFileMode,
  type ConfigFileOutcome,
  type ConfigPlan,
  type ConfigSnapshot,
  type Destination,
  type Keyspace,
  type Source,
  type ValidConfig,
} from '@eventrelay/config';
import { execAll, type Logger } from '@eventrelay/runtime';
import { cappedLogKeys } from './capped-log.js';
import { deliveryKeys } from './delivery-records.js';
import { auditLogKey, sourceEventsKey } from './operator-logs.js';
import { audienceDataKeys, profileKeys } from './profile-keys.js';

export function configKeys(prefix: string) {
  return {
    sources: `${prefix}:cfg:sources`,
    sourcesByWriteKey: `${prefix}:cfg:sources-by-write-key`,
    destinations: `${prefix}:cfg:destinations`,
    audiences: `${prefix}:cfg:audiences`,
    version: `${prefix}:cfg:version`,
    /** userId → {"sourceIds":[...]} (or {} for every source): users whose calls the router drops. */
    suppressedUsers: `${prefix}:reg:suppressed-users`,
  } as const;
}

// Writes a planned change only if the version is still the one it was planned against, then bumps
// it and appends the audit entries: all of it or none, whatever other writers do meanwhile.
// KEYS: version, audit list, audit counter, then the keys the operations name by index.
// ARGV: expected version, audit cap, audit entry count, the entries, then operations of four
// arguments each: HSET key field value | HDEL key field - | DEL key - -.
const COMMIT = `
if tonumber(redis.call('GET', KEYS[1]) or '0') ~= tonumber(ARGV[1]) then return -1 end
local entries = tonumber(ARGV[3])
for i = 4 + entries, #ARGV, 4 do
  local key = KEYS[tonumber(ARGV[i + 1])]
  if ARGV[i] == 'HSET' then redis.call('HSET', key, ARGV[i + 2], ARGV[i + 3])
  elseif ARGV[i] == 'HDEL' then redis.call('HDEL', key, ARGV[i + 2])
  else redis.call('DEL', key) end
end
for i = 4, 3 + entries do redis.call('LPUSH', KEYS[2], ARGV[i]) end
if entries > 0 then
  redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
  redis.call('INCRBY', KEYS[3], entries)
end
return redis.call('INCR', KEYS[1])
`;

export interface ConfigStoreOptions {
  /** Audit entries kept; older ones are trimmed. */
  readonly auditMax?: number;
  /**
   * Where the records of sources and destinations live (EVENTRELAY_SHARDS): a deleted one's debug
   * events, attempt log and dead letters go with it. The prefix alone (one shard) by default.
   */
  readonly keys?: Keyspace;
}

/** How often a write is planned again after losing a race with another writer, before giving up. */
const MAX_WRITE_TRIES = 50;

export class ConfigStore {
  private readonly keys: ReturnType<typeof configKeys>;
  private readonly auditKeys: { list: string; seq: string };
  private readonly auditMax: number;
  private readonly keyspace: Keyspace;
  /** Writes from this process go one at a time, so they only race writers in other processes. */
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    options: ConfigStoreOptions = {},
  ) {
    this.keys = configKeys(prefix);
    this.auditKeys = cappedLogKeys(auditLogKey(prefix));
    this.auditMax = options.auditMax ?? 10_000;
    this.keyspace = options.keys ?? keyspace(prefix);
  }

  async version(): Promise<number> {
    return Number((await this.redis.get(this.keys.version)) ?? 0);
  }

  async sourceByWriteKey(writeKey: string): Promise<Source | undefined> {
    const json = await this.redis.hget(this.keys.sourcesByWriteKey, writeKey);
    return json === null ? undefined : (JSON.parse(json) as Source);
  }

  async sources(): Promise<Source[]> {
    return Object.values(await this.redis.hgetall(this.keys.sources)).map((j) => JSON.parse(j) as Source);
  }

  async destinations(): Promise<Destination[]> {
    return Object.values(await this.redis.hgetall(this.keys.destinations)).map((j) => JSON.parse(j) as Destination);
  }

  /** Everything at one version (one MULTI). */
  async snapshot(): Promise<ConfigSnapshot> {
    const [version, sources, destinations, audiences] = await execAll(
      this.redis.multi().get(this.keys.version).hgetall(this.keys.sources).hgetall(this.keys.destinations).hgetall(this.keys.audiences),
    );
    // By id, so whatever iterates a snapshot (plans, audit details, lists) does so in a stable order.
    const parse = <T extends { id: string }>(hash: unknown) =>
      new Map(
        Object.values(hash as Record<string, string>)
          .map((j) => JSON.parse(j) as T)
          .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .map((x) => [x.id, x]),
      );
    return {
      version: Number(version ?? 0),
      sources: parse<Source>(sources),
      destinations: parse<Destination>(destinations),
      audiences: parse<Audience>(audiences),
    };
  }

  /**
   * Plans against a fresh snapshot and commits; when another process wrote in between, plans
   * again. `plan` may throw to refuse (nothing is written then). Returns the plan's result.
   */
  update<R>(plan: (snapshot: ConfigSnapshot) => ConfigPlan<R>): Promise<R> {
    const run = async (): Promise<R> => {
      for (let attempt = 1; ; attempt++) {
        const snapshot = await this.snapshot();
        const planned = plan(snapshot);
        // Nothing to write: no commit, so no version bump that would make every reader reload.
        if (planned.changes.length === 0 && (planned.audit ?? []).length === 0) return planned.result;
        if ((await this.commit(snapshot.version, planned.changes, planned.audit ?? [])) !== undefined) return planned.result;
        if (attempt >= MAX_WRITE_TRIES)
          throw new Error(`config store: ${MAX_WRITE_TRIES} writes in a row lost a race with other writers; giving up`);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
      }
    };
    const done = this.writes.then(run, run);
    this.writes = done.catch(() => undefined);
    return done;
  }

  /** Idempotent upsert of a checked config (see planUpsert), all of it or none. */
  async apply(config: ValidConfig): Promise<{ version: number }> {
    await this.update((snapshot) => ({ changes: planUpsert(snapshot, config), result: undefined }));
    return { version: await this.version() };
  }

  /**
   * Writes the changes if the version is still `expectedVersion`; returns the new version, or
   * undefined when someone else wrote first (nothing is written then).
   */
  async commit(expectedVersion: number, changes: readonly ConfigChange[], audit: readonly AuditEntry[] = []): Promise<number | undefined> {
    const keys = [this.keys.version, this.auditKeys.list, this.auditKeys.seq];
    const index = (key: string) => {
      const at = keys.indexOf(key);
      return String(at >= 0 ? at + 1 : keys.push(key));
    };
    // Unmappings first: a write key may move from one source to another in the same commit.
    const unmap: string[] = [];
    const ops: string[] = [];
    const records = deliveryKeys(this.keyspace);
    // A deleted source's or destination's records: in the commit when they share its slot (one
    // shard), else deleted right after it (a shard's slot is elsewhere on a cluster).
    const after: (() => Promise<unknown>)[] = [];
    const drop = (key: string) => {
      if (key.startsWith(`${this.prefix}:`)) ops.push('DEL', index(key), '-', '-');
      else after.push(() => this.redis.del(key));
    };
    const dropField = (key: string, field: string) => {
      if (key.startsWith(`${this.prefix}:`)) ops.push('HDEL', index(key), field, '-');
      else after.push(() => this.redis.hdel(key, field));
    };
    for (const change of changes) {
      switch (change.kind) {
        case 'put-source':
          if (change.previousWriteKey !== undefined) unmap.push('HDEL', index(this.keys.sourcesByWriteKey), change.previousWriteKey, '-');
          ops.push('HSET', index(this.keys.sources), change.source.id, JSON.stringify(change.source));
          ops.push('HSET', index(this.keys.sourcesByWriteKey), change.source.writeKey, JSON.stringify(change.source));
          break;
        case 'delete-source': {
          unmap.push('HDEL', index(this.keys.sourcesByWriteKey), change.source.writeKey, '-');
          ops.push('HDEL', index(this.keys.sources), change.source.id, '-');
          const events = cappedLogKeys(sourceEventsKey(this.keyspace, change.source.id));
          drop(events.list);
          drop(events.seq);
          // Its profile count: a source created again under the id starts from none.
          drop(profileKeys(this.prefix).sourceProfiles(change.source.id));
          break;
        }
        case 'put-destination':
          ops.push('HSET', index(this.keys.destinations), change.destination.id, JSON.stringify(change.destination));
          break;
        case 'delete-destination': {
          ops.push('HDEL', index(this.keys.destinations), change.id, '-');
          const attempts = cappedLogKeys(records.attempts(change.id));
          for (const key of [
            attempts.list,
            attempts.seq,
            records.deadIndex(change.id),
            records.deadData(change.id),
            records.deadByMessage(change.id),
          ])
            drop(key);
          // The byte total of its letters; left behind, it would be summed afresh at the next
          // letter of a destination of the same id anyway (no letters: the total is not trusted).
          dropField(records.deadBytes(change.id), change.id);
          break;
        }
        case 'put-audience':
          ops.push('HSET', index(this.keys.audiences), change.audience.id, JSON.stringify(change.audience));
          break;
        case 'delete-audience':
          ops.push('HDEL', index(this.keys.audiences), change.id, '-');
          for (const key of audienceDataKeys(this.prefix, change.id)) ops.push('DEL', index(key), '-', '-');
          break;
        default:
          return unreachable(change);
      }
    }
    const entries = audit.map((a) => JSON.stringify(a));
    const result = await this.redis.eval(
      COMMIT,
      keys.length,
      ...keys,
      expectedVersion,
      this.auditMax,
      entries.length,
      ...entries,
      ...unmap,
      ...ops,
    );
    if (Number(result) < 0) return undefined;
    // Should the process die before these, the records stay behind the deleted source or destination.
    await Promise.all(after.map((write) => write()));
    return Number(result);
  }
}

function unreachable(value: never): never {
  throw new Error(`config store: unknown change ${JSON.stringify(value)}`);
}

/** The declarative config file named by EVENTRELAY_CONFIG, read and checked, with its mode. */
export interface ConfigFile {
  readonly path: string;
  readonly mode: ConfigFileMode;
  readonly config: ValidConfig;
}

/**
 * Reads and checks the file (nothing when no path is given); throws ConfigError naming the file
 * and the field. Processes call it before they connect, so a bad file leaves Redis untouched.
 * `mode` is EVENTRELAY_CONFIG_MODE (see planConfigFile).
 */
export async function readConfigFile(path: string | undefined, mode: ConfigFileMode = 'seed'): Promise<ConfigFile | undefined> {
  if (!path) return undefined;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      'invalid_config',
      `EVENTRELAY_CONFIG: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { cause: err },
    );
  }
  return { path, mode, config: parseConfigText(text, path) };
}

/**
 * Applies the file at start by its mode: `seed` only into a prefix nothing was ever written to,
 * `sync` every time; only what differs is written, each change audited as the file's doing. Every
 * process that is given the file does this, whichever starts first; the others find nothing to do.
 */
export async function applyConfigFile(
  store: ConfigStore,
  file: ConfigFile | undefined,
  logger: Logger,
  clock: () => number = Date.now,
): Promise<ConfigFileOutcome | undefined> {
  if (!file) return undefined;
  const outcome = await store.update((snapshot) =>
    planConfigFile(snapshot, file.config, { mode: file.mode, path: file.path, now: new Date(clock()).toISOString() }),
  );
  logger.info({ file: file.path, mode: file.mode, ...outcome, version: await store.version() }, `config.${outcome.outcome}`);
  return outcome;
}
