/**
 * Sources, destinations and audiences live in Redis so that every process sees a change within
 * seconds without a restart. Writers bump a version counter in the same transaction; readers poll
 * that one key and reload only when it moved.
 */
import { readFile } from 'node:fs/promises';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ConfigError, parseConfigText, type Destination, type Source, type ValidConfig } from '@eventrelay/config';

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

export class ConfigStore {
  private readonly keys: ReturnType<typeof configKeys>;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.keys = configKeys(prefix);
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

  /**
   * Idempotent upsert of a checked config: everything in one MULTI, so readers see all of it or
   * none of it. A write key that moved to another source, or away from a source, is unmapped.
   */
  async apply(config: ValidConfig): Promise<{ version: number }> {
    for (let attempt = 0; ; attempt++) {
      await this.redis.watch(this.keys.sources, this.keys.sourcesByWriteKey);
      const existing = await this.sources();
      const byKey = await this.redis.hgetall(this.keys.sourcesByWriteKey);
      const incoming = new Map(config.sources.map((s) => [s.id, s]));
      const conflicts = config.sources.flatMap((s) => {
        const holder = byKey[s.writeKey] === undefined ? undefined : (JSON.parse(byKey[s.writeKey] as string) as Source);
        return holder && holder.id !== s.id && !incoming.has(holder.id) ? [`source "${s.id}": its writeKey already belongs to source "${holder.id}"`] : [];
      });
      if (conflicts.length > 0) {
        await this.redis.unwatch();
        throw new ConfigError('invalid_config', conflicts.join('; '));
      }
      const tx = this.redis.multi();
      for (const old of existing) {
        const next = incoming.get(old.id);
        if (next && next.writeKey !== old.writeKey) tx.hdel(this.keys.sourcesByWriteKey, old.writeKey);
      }
      for (const s of config.sources) {
        const json = JSON.stringify(s);
        tx.hset(this.keys.sources, s.id, json);
        tx.hset(this.keys.sourcesByWriteKey, s.writeKey, json);
      }
      for (const d of config.destinations) tx.hset(this.keys.destinations, d.id, JSON.stringify(d));
      for (const a of config.audiences) tx.hset(this.keys.audiences, a.id, JSON.stringify(a));
      tx.incr(this.keys.version);
      const result = await tx.exec();
      if (result !== null) return { version: Number(result[result.length - 1]?.[1]) };
      if (attempt >= 5) throw new Error('config store: too many concurrent writers, gave up after 6 tries');
    }
  }
}

/** The declarative config file named by EVENTRELAY_CONFIG, read and checked. */
export interface ConfigFile {
  readonly path: string;
  readonly config: ValidConfig;
}

/**
 * Reads and checks the file (nothing when no path is given); throws ConfigError naming the file
 * and the field. Processes call it before they connect, so a bad file leaves Redis untouched.
 */
export async function readConfigFile(path: string | undefined): Promise<ConfigFile | undefined> {
  if (!path) return undefined;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError('invalid_config', `EVENTRELAY_CONFIG: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  return { path, config: parseConfigText(text, path) };
}

/** Applies the file at start (an idempotent upsert; every process does, whichever starts first). */
export async function applyConfigFile(store: ConfigStore, file: ConfigFile | undefined, logger: Logger): Promise<void> {
  if (!file) return;
  logger.info({ file: file.path, version: (await store.apply(file.config)).version }, 'config.applied');
}
