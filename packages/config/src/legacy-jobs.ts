/**
 * Jobs in the shapes eventrelay wrote before jobs carried batches: a route job per intake request
 * holding its calls, and a delivery job per call and destination. A deployment that upgrades with
 * such jobs still queued (or retrying for hours) must deliver them, not drop them; the router and
 * webhook-delivery read them through these functions. Remove once no supported version writes them.
 * A legacy route job's delivery jobs hold its calls (there is no batch); their ids are deterministic
 * per route job and destination, so a retry while they are queued adds nothing, but unlike the
 * router's old deduplication keys nothing remembers them once done: a router crash in that window,
 * during the upgrade, can deliver a call twice.
 */
import type { DeleteNotice, HeldDeliverJob, NormalizedCall, RetryState } from './generated/contracts.js';

export interface LegacyRouteJob {
  readonly sourceId: string;
  readonly requestId: string;
  readonly calls: readonly NormalizedCall[];
}

/** The route job as a legacy one, or undefined when it is of the current shape (`{batchId}`). */
export function legacyRouteJob(data: unknown): LegacyRouteJob | undefined {
  if (data === null || typeof data !== 'object' || 'batchId' in data) return undefined;
  const d = data as Partial<LegacyRouteJob>;
  return typeof d.sourceId === 'string' && typeof d.requestId === 'string' && Array.isArray(d.calls) ? (d as LegacyRouteJob) : undefined;
}

/**
 * A legacy delivery job (one call, `{sourceId, destinationId, call, retry?}`) as the job holding
 * that call it now is; undefined when the job is of a current shape.
 */
export function heldFromLegacyDeliverJob(data: unknown): HeldDeliverJob | undefined {
  if (data === null || typeof data !== 'object' || 'batch' in data || 'calls' in data) return undefined;
  const d = data as { sourceId?: unknown; destinationId?: unknown; call?: unknown; retry?: RetryState };
  if (typeof d.sourceId !== 'string' || typeof d.destinationId !== 'string' || d.call === null || typeof d.call !== 'object')
    return undefined;
  const call = d.call as NormalizedCall | DeleteNotice;
  return {
    destinationId: d.destinationId,
    calls: [{ sourceId: d.sourceId, call, ...(d.retry ? { retry: d.retry } : {}) }],
    runs: d.retry?.attempt ?? 0,
  };
}
