/**
 * Suppressed users, looked up per route job with one HMGET for the batch's distinct userIds. While no
 * user is suppressed (the usual case, checked once a second) no lookup is made at all, so the
 * drop point costs nothing until a SUPPRESS regulation exists.
 */
import type { Redis } from 'ioredis';
import { configKeys } from '@eventrelay/stores';
import type { Suppression } from '../domain/suppression.js';

export class SuppressionList {
  private readonly key: string;
  private size = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly onProblem: (what: string, detail: Record<string, unknown>) => void,
    private readonly refreshMs = 1000,
  ) {
    this.key = configKeys(prefix).suppressedUsers;
  }

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(
      () => void this.refresh().catch((err: unknown) => this.onProblem('suppressions.refresh_failed', { err: String(err) })),
      this.refreshMs,
    );
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async refresh(): Promise<void> {
    this.size = await this.redis.hlen(this.key);
  }

  /** Suppressions of the calls' users; none is looked for while no user is suppressed at all. */
  async lookup(calls: readonly { readonly userId?: string | undefined }[]): Promise<ReadonlyMap<string, Suppression>> {
    const found = new Map<string, Suppression>();
    if (this.size === 0) return found;
    const userIds = [...new Set(calls.map((c) => c.userId).filter((u): u is string => u !== undefined))];
    if (userIds.length === 0) return found;
    const values = await this.redis.hmget(this.key, ...userIds);
    values.forEach((value, i) => {
      if (value === null) return;
      const userId = userIds[i] as string;
      const entry = parseEntry(value);
      // An unreadable entry still suppresses (for every source, the safe reading of a privacy
      // request) rather than failing every route job that carries the user.
      if (entry === undefined) this.onProblem('suppressions.unreadable_entry', { userId });
      found.set(userId, entry ?? { allSources: true });
    });
    return found;
  }
}

function parseEntry(value: string): Suppression | undefined {
  try {
    const entry = JSON.parse(value) as { sourceIds?: unknown };
    if (entry === null || typeof entry !== 'object') return undefined;
    if (entry.sourceIds === undefined) return { allSources: true };
    if (!Array.isArray(entry.sourceIds) || !entry.sourceIds.every((s) => typeof s === 'string')) return undefined;
    return entry.sourceIds.length > 0 ? { allSources: false, sourceIds: entry.sourceIds } : { allSources: true };
  } catch {
    return undefined;
  }
}
