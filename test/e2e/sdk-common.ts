/**
 * What the SDK compatibility tests share: the payload every SDK sends (fresh objects per call,
 * because some SDKs write into the context object they are given), and readers for what ingest
 * put on the route queue.
 */
import type { TestIngest } from '../support/ingest';

/** A normalized call as read back from the route queue. */
export interface QueuedCall {
  type: string;
  messageId: string;
  timestamp: string;
  receivedAt: string;
  originalTimestamp?: string;
  sentAt?: string;
  [key: string]: unknown;
}

/** One source's calls in one route job. */
export interface QueuedJob {
  batchId: string;
  sourceId: string;
  calls: QueuedCall[];
}

export const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The custom context every call carries; the SDKs add their own keys (library, traits) beside it. */
export function customContext(): Record<string, unknown> {
  return { ip: '203.0.113.9', app: { name: 'sdk-compat-app' }, custom: { nested: true, list: [1, 'two', { three: 3 }] } };
}

/** Turns every destination off except Webhooks (docs/spec.md §3). */
export function customIntegrations(): { All: boolean; Webhooks: boolean } {
  return { All: false, Webhooks: true };
}

export const userTraits = (): Record<string, unknown> => ({
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  plan: 'pro',
  logins: 3,
  address: { city: 'Zürich' },
});
export const groupTraits = (): Record<string, unknown> => ({ name: 'Analytical Engines Ltd', employees: 42, industry: 'computing' });
export const trackProperties = (): Record<string, unknown> => ({
  plan: 'pro',
  revenue: 19.99,
  currency: 'EUR',
  items: [{ sku: 'A-1', qty: 2 }],
});
export const pageProperties = (): Record<string, unknown> => ({
  path: '/pricing',
  url: 'https://example.com/pricing',
  title: 'Pricing',
  referrer: 'https://example.com/',
});
export const screenProperties = (): Record<string, unknown> => ({ section: 'settings', variant: 'dark' });

export async function queuedJobs(t: TestIngest): Promise<QueuedJob[]> {
  return await t.routeJobs();
}

export function callsOf(jobs: readonly QueuedJob[]): QueuedCall[] {
  return jobs.flatMap((job) => job.calls);
}

/** The one queued call with this messageId; fails (with the ids present) when there is not exactly one. */
export function onlyCallWithId(calls: readonly QueuedCall[], messageId: string | undefined): QueuedCall {
  const matches = calls.filter((c) => c.messageId === messageId);
  if (matches.length !== 1) {
    throw new Error(
      `expected exactly one queued call with messageId ${String(messageId)}, found ${matches.length}; queued: ${calls.map((c) => `${c.type}:${c.messageId}`).join(', ')}`,
    );
  }
  return matches[0] as QueuedCall;
}

/** A wire value as ingest would see it after JSON parsing (Dates already are ISO strings there). */
export function isoOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

/**
 * Wire fields whose value ingest deliberately rewrites (timestamps are parsed and re-rendered,
 * the write key does not travel); every other field must reach the queue unchanged.
 */
export const REWRITTEN_FIELDS = new Set(['timestamp', 'originalTimestamp', 'sentAt', 'receivedAt', 'writeKey']);
