/**
 * Preview (POST /destinations/:id/preview, POST /destinations/preview): what a destination would
 * do with a sample call, decided by the same functions delivery and the router use (filtersOf,
 * callBody, buildHeaders), so the body shown is the body a delivery sends. The first attempt's
 * headers are built at `now`. Pure.
 */
import {
  RequestError,
  batchBody,
  batchDeliveryId,
  buildHeaders,
  callBody,
  filtersOf,
  schemaProblems,
  validateNormalizedCall,
  type Destination,
  type NormalizedCall,
  type PreviewResult,
  type PreviewedRequest,
} from '@eventrelay/config';
import { toDestinationView } from './destination-view.js';

export interface PreviewInput {
  readonly destination: Destination;
  /** The call as given: an object, completed here. */
  readonly call: object;
  readonly sourceId: string | undefined;
  readonly now: number;
  readonly newMessageId: () => string;
}

/** The call as the intake would store it: messageId, timestamp and receivedAt filled in when left out, then checked. */
function previewCall(given: object, now: number, newMessageId: () => string): NormalizedCall {
  const at = new Date(now).toISOString();
  const call: unknown = { messageId: newMessageId(), timestamp: at, receivedAt: at, ...given };
  if (!validateNormalizedCall(call)) {
    const problems = schemaProblems(validateNormalizedCall.errors, 'call');
    throw new RequestError('invalid_request', problems.map((p) => `${p.field} ${p.message}`).join('; '), problems);
  }
  return call;
}

export function previewDelivery(input: PreviewInput): PreviewResult {
  const { destination, now } = input;
  const call = previewCall(input.call, now, input.newMessageId);
  const decision = filtersOf(destination).decide(call);
  if (!decision.send) return { decision, call, requests: [] };
  const rendered = callBody(call, destination);
  if (!rendered.ok) return { decision, call, error: rendered.error, requests: [] };
  const sourceId = input.sourceId ?? destination.sourceIds[0] ?? 'preview';
  const batched = destination.settings.batching !== undefined;
  const body = batched ? batchBody([rendered.body]) : rendered.body;
  const hints = toDestinationView(destination).settings.webhooks;
  const requests = destination.settings.webhooks.flatMap((target, i): PreviewedRequest[] => {
    if (target.disabled) return [];
    const headers = buildHeaders({
      body,
      messageId: batched ? batchDeliveryId(destination.id, [{ sourceId, messageId: call.messageId }]) : call.messageId,
      ...(batched ? { batchSize: 1 } : {}),
      attempt: 1,
      sharedSecret: destination.settings.sharedSecret,
      signing: {
        destinationId: destination.id,
        sourceId,
        now,
        previousSecret: destination.settings.previousSecret,
        standardWebhooks: destination.settings.standardWebhooks,
      },
    });
    const staticHeaders = hints[i]?.headers;
    return [{ url: target.url, headers, ...(staticHeaders ? { staticHeaders } : {}), body }];
  });
  return { decision, call, requests };
}
