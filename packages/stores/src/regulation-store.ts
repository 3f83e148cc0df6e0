/**
 * Regulation records (what GET /admin/v1/regulations/:id reports): one JSON value per regulation in
 * a hash. The admin API creates the record after queuing the regulation's job; the audiences
 * service, which carries it out, saves its progress. The subject ids are never stored here.
 */
import type { RedisClient } from '@eventrelay/runtime';
import type { Regulation } from '@eventrelay/config';
import { profileKeys } from './profile-keys.js';

export class RegulationStore {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.key = profileKeys(prefix).regulations;
  }

  /** Writes the record unless one exists (the worker may have started on it already). */
  async create(regulation: Regulation): Promise<void> {
    await this.redis.hsetnx(this.key, regulation.id, JSON.stringify(regulation));
  }

  async save(regulation: Regulation): Promise<void> {
    await this.redis.hset(this.key, regulation.id, JSON.stringify(regulation));
  }

  async get(id: string): Promise<Regulation | undefined> {
    const json = await this.redis.hget(this.key, id);
    return json === null ? undefined : (JSON.parse(json) as Regulation);
  }
}
