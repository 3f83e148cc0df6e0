/**
 * The webhook body of each call type, exactly as docs/spec.md §4 lists its keys. Key order is fixed
 * here (and by the golden fixtures) because receivers verify the signature over these exact bytes.
 */
import type { DeleteNotice, NormalizedCall } from '../generated/contracts.js';

type Body = Record<string, unknown>;

/** The page fields analytics.js keeps in context.page; the original description lists them among page properties (docs/spec.md §4). */
const PAGE_FIELDS = ['path', 'referrer', 'title', 'url'] as const;

export function buildBody(call: NormalizedCall | DeleteNotice): string {
  // JSON.stringify leaves out keys whose value is undefined, so absent values need no filtering,
  // and it writes keys in the order they were set: the order of each literal below.
  return JSON.stringify(bodyObject(call));
}

function bodyObject(call: NormalizedCall | DeleteNotice): Body {
  if (call.type === 'delete') return { type: 'delete', userId: call.userId, timestamp: utcMillis(call.timestamp) };
  const { userId, anonymousId, context } = call;
  const timestamp = utcMillis(call.timestamp);
  switch (call.type) {
    case 'page':
      return { version: 1, type: 'page', userId, anonymousId, properties: pageProperties(call), timestamp, context };
    case 'screen':
      return { version: 1, type: 'screen', userId, anonymousId, name: call.name, timestamp, context };
    case 'identify':
      return { version: 1, type: 'identify', userId, anonymousId, traits: call.traits, timestamp, context };
    case 'track':
      return { version: 1, type: 'track', userId, anonymousId, event: call.event, properties: call.properties, timestamp, context };
    case 'alias':
      // The original description (docs/spec.md §4) documents "Previous ID"/"User ID"; receivers written for other Segment-style
      // pipelines read previousId/userId, so both are sent.
      return {
        version: 1,
        type: 'alias',
        'Previous ID': call.previousId,
        'User ID': userId,
        previousId: call.previousId,
        userId,
        anonymousId,
        timestamp,
        context,
      };
    case 'group':
      return { version: 1, type: 'group', groupId: call.groupId, userId, anonymousId, traits: call.traits, timestamp, context };
  }
}

/**
 * The call's own properties, with the page fields of context.page and the page name filled in
 * where the call's properties lack them, since the page body has no other place for them.
 */
function pageProperties(call: NormalizedCall): Body | undefined {
  const page = call.context?.['page'];
  const fromContext: Body = {};
  if (page !== null && typeof page === 'object') {
    for (const field of PAGE_FIELDS) {
      const value = (page as Body)[field];
      if (value !== undefined) fromContext[field] = value;
    }
  }
  const merged: Body = { ...fromContext, ...call.properties };
  if (call.name !== undefined && merged['name'] === undefined) merged['name'] = call.name;
  return Object.keys(merged).length === 0 && call.properties === undefined ? undefined : merged;
}

/** Ingest already stores UTC with milliseconds; this keeps the promise for any other producer. */
function utcMillis(timestamp: string): string {
  if (UTC_MILLIS.test(timestamp)) return timestamp;
  const ms = Date.parse(timestamp);
  return Number.isNaN(ms) ? timestamp : new Date(ms).toISOString();
}

const UTC_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
