/** Who writes and when: every planned write is audited with it. */
import type { AuditEntry } from '@eventrelay/config';

export interface WriteContext {
  readonly tokenId: string;
  /** ISO 8601 UTC. */
  readonly now: string;
}

export function auditEntry(ctx: WriteContext, action: string, targetId: string, details?: Record<string, unknown>): AuditEntry {
  return { at: ctx.now, tokenId: ctx.tokenId, action, targetId, ...(details ? { details } : {}) };
}
