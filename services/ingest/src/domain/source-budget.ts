/**
 * What a source may cost (docs/intake.md, "Budgets"). Web and mobile write keys ship in every page
 * and app, so anyone can send with them: such a source gets a lower default rate and a smaller
 * share of Redis than a server source, whose key is a secret. A source's own rateLimitPerSecond or
 * memoryShare overrides the default of its type.
 */
import type { Source } from '@eventrelay/config';

export interface SourceDefaults {
  readonly serverRatePerSecond: number;
  readonly clientRatePerSecond: number;
  /** Shares of maxmemory (0 to 1) a source's dedupe claims may hold; 0 = no budget. */
  readonly serverMemoryShare: number;
  readonly clientMemoryShare: number;
}

type Priced = Pick<Source, 'type' | 'rateLimitPerSecond' | 'memoryShare'>;

/** Whether the source's write key is public by nature (it ships to browsers or phones). */
function isClient(source: Priced): boolean {
  return source.type !== 'server';
}

export function ratePerSecondOf(source: Priced, defaults: SourceDefaults): number {
  return source.rateLimitPerSecond ?? (isClient(source) ? defaults.clientRatePerSecond : defaults.serverRatePerSecond);
}

/**
 * Bytes the source's dedupe claims may hold in Redis, or undefined when it has no budget: Redis has
 * no maxmemory (`maxmemory` undefined or 0: nothing to take a share of) or the share is 0.
 */
export function budgetBytesOf(source: Priced, defaults: SourceDefaults, maxmemory: number | undefined): number | undefined {
  if (maxmemory === undefined || maxmemory <= 0) return undefined;
  const share = source.memoryShare ?? (isClient(source) ? defaults.clientMemoryShare : defaults.serverMemoryShare);
  return share > 0 ? Math.floor(share * maxmemory) : undefined;
}
