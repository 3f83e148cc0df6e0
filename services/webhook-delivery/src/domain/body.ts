/**
 * The webhook body of each call type, exactly as SPEC section 4 lists its keys. Key order is fixed
 * here (and by the golden fixtures) because receivers verify the signature over these exact bytes.
 */
import type { DeleteNotice, NormalizedCall } from '@eventrelay/config';

type Body = Record<string, unknown>;

/** The page fields analytics.js keeps in context.page; the seed lists them among page properties. */
const PAGE_FIELDS = ['path', 'referrer', 'title', 'url'] as const;

export function buildBody(call: NormalizedCall | DeleteNotice): string {
  return JSON.stringify(bodyObject(call));
}

function bodyObject(call: NormalizedCall | DeleteNotice): Body {
  if (call.type === 'delete') return { type: 'delete', userId: call.userId, timestamp: utcMillis(call.timestamp) };
  const head = { version: 1, type: call.type };
  const who = { userId: call.userId, anonymousId: call.anonymousId };
  const tail = { timestamp: utcMillis(call.timestamp), context: call.context };
  switch (call.type) {
    case 'page':
      return present({ ...head, ...who, properties: pageProperties(call), ...tail });
    case 'screen':
      return present({ ...head, ...who, name: call.name, ...tail });
    case 'identify':
      return present({ ...head, ...who, traits: call.traits, ...tail });
    case 'track':
      return present({ ...head, ...who, event: call.event, properties: call.properties, ...tail });
    case 'alias':
      // The seed documents "Previous ID"/"User ID"; receivers written for other Segment-style
      // pipelines read previousId/userId, so both are sent.
      return present({ ...head, 'Previous ID': call.previousId, 'User ID': call.userId, previousId: call.previousId, ...who, ...tail });
    case 'group':
      return present({ ...head, groupId: call.groupId, ...who, traits: call.traits, ...tail });
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

/** Drops keys whose value is absent, keeping the order of the rest (a copy: `delete` is slow). */
function present(body: Body): Body {
  const out: Body = {};
  for (const key in body) if (body[key] !== undefined) out[key] = body[key];
  return out;
}

/** Ingest already stores UTC with milliseconds; this keeps the promise for any other producer. */
function utcMillis(timestamp: string): string {
  const ms = Date.parse(timestamp);
  return Number.isNaN(ms) || /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(timestamp) ? timestamp : new Date(ms).toISOString();
}
