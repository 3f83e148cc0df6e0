/**
 * What a Webhooks destination is sent (docs/filters.md): each call's body (the destination's field
 * rules applied, then its mapping, else docs/spec.md §4's body) and, with batching, the POSTs that
 * carry several bodies as one JSON array. One module for delivery and for the admin's preview, so a
 * preview shows the bytes a delivery sends. Compiled rules and mappings are cached per config
 * object: a config load replaces the objects, never changes them in place.
 */
import { hash } from 'node:crypto';
import { callDeliveryId } from '../delivery-ids.js';
import { filtersOf } from '../filters/destination-filters.js';
import type { Batching, DeleteNotice, Destination, NormalizedCall } from '../generated/contracts.js';
import { compileMapping, type RenderedBody } from '../mapping/mapping.js';
import { buildBody } from './body.js';

export type CallBody = RenderedBody;

const compiledMappings = new WeakMap<object, ReturnType<typeof compileMapping>>();

/**
 * The body of one call. Delete notices (docs/spec.md §6) keep their own body whatever the
 * destination's rules say: they are a contract with the receiver, not a call it chose to get.
 */
export function callBody(call: NormalizedCall | DeleteNotice, destination: Destination): CallBody {
  if (call.type === 'delete') return { ok: true, body: buildBody(call) };
  const shaped = filtersOf(destination).shape(call);
  const mapping = destination.settings.mapping;
  if (mapping === undefined) {
    const body = buildBody(shaped);
    return { ok: true, body: destination.settings.batching === undefined ? body : withMessageId(body, call.messageId) };
  }
  let render = compiledMappings.get(mapping);
  if (!render) compiledMappings.set(mapping, (render = compileMapping(mapping as Readonly<Record<string, unknown>>)));
  return render(shaped);
}

/**
 * In a batch, the POST's id names its group of calls, and a group can change between retries (a
 * call reaches its window's end, a Retry-After holds one URL): each default body names its call,
 * first, so a receiver dedupes per call. A mapping writes whatever the receiver asked for.
 */
function withMessageId(body: string, messageId: string): string {
  return `{"messageId":${JSON.stringify(messageId)},${body.slice(1)}`;
}

const DEFAULT_BATCH_MAX_CALLS = 100;
const DEFAULT_BATCH_MAX_BYTES = 1024 * 1024;

/**
 * The calls' bodies grouped into POSTs, in order: each group holds at most maxCalls bodies and
 * maxBytes bytes of array text; a body larger than maxBytes on its own goes alone. Returns the
 * positions in `bodies` of each group's calls.
 */
export function batchGroups(bodies: readonly string[], batching: Batching): number[][] {
  const maxCalls = batching.maxCalls ?? DEFAULT_BATCH_MAX_CALLS;
  const maxBytes = batching.maxBytes ?? DEFAULT_BATCH_MAX_BYTES;
  const groups: number[][] = [];
  let current: number[] = [];
  let bytes = 2; // the brackets
  bodies.forEach((body, i) => {
    const size = Buffer.byteLength(body);
    // The comma before it counts while the group has a body; a new group has none.
    if (current.length > 0 && (current.length >= maxCalls || bytes + 1 + size > maxBytes)) {
      groups.push(current);
      current = [];
      bytes = 2;
    }
    bytes += size + (current.length > 0 ? 1 : 0);
    current.push(i);
  });
  if (current.length > 0) groups.push(current);
  return groups;
}

/** The text of one batched POST. */
export function batchBody(bodies: readonly string[]): string {
  return `[${bodies.join(',')}]`;
}

/**
 * A batched POST's id (its X-Eventrelay-Message-Id and webhook-id): the same calls give the same
 * id, so a POST retried with the calls it failed with is recognised as the same one.
 */
export function batchDeliveryId(
  destinationId: string,
  calls: readonly { readonly sourceId: string; readonly messageId: string }[],
): string {
  const ids = calls.map((c) => callDeliveryId(destinationId, c.sourceId, c.messageId)).join('\n');
  return `${destinationId}-batch-${hash('sha256', ids, 'base64url').slice(0, 22)}`;
}
