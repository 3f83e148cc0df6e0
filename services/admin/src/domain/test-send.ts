/**
 * Test send (POST /admin/v1/destinations/:id/test-send): one realistic sample call, routed like any
 * call of its source, with `integrations` that let it reach this destination only (the router takes
 * a destination id as an integrations key). The call says what it is in `context.eventrelayTestSend`,
 * and its user is TEST_SEND_USER_ID, so a receiver (or an operator reading its logs) can tell it
 * from real traffic.
 */
import {
  RequestError,
  filtersOf,
  type ConfigSnapshot,
  type Destination,
  type NormalizedCall,
  type Source,
  type TestSendRequest,
} from '@eventrelay/config';
import { existingDestination } from './destinations.js';

export const TEST_SEND_USER_ID = 'eventrelay-test-user';

export interface TestSendTarget {
  readonly destination: Destination;
  readonly source: Source;
}

/** The destination and the source the call comes from: the one asked for, else the first connected. */
export function testSendTarget(snapshot: ConfigSnapshot, destinationId: string, request: TestSendRequest): TestSendTarget {
  const destination = existingDestination(snapshot, destinationId);
  if (!destination.enabled)
    throw new RequestError('conflict', `destination "${destination.id}" is disabled: enable it first, or the test call is dead-lettered`);
  // The call picks its destination by id in `integrations`; an id that is also `All` or the
  // destination's name would pick every destination of the source.
  if (destination.id === 'All' || destination.id === destination.name)
    throw new RequestError(
      'conflict',
      `destination id "${destination.id}" is also an integrations key of every destination, so a test call cannot be sent to it alone`,
    );
  if (request.sourceId !== undefined && !destination.sourceIds.includes(request.sourceId)) {
    const message = `is not one of the destination's sources (${destination.sourceIds.join(', ') || 'none'})`;
    throw new RequestError('invalid_request', `sourceId ${message}`, [{ field: 'sourceId', message }]);
  }
  const sourceId = request.sourceId ?? destination.sourceIds[0];
  const source = sourceId === undefined ? undefined : snapshot.sources.get(sourceId);
  if (!source)
    throw new RequestError('conflict', `destination "${destination.id}" has no source: connect one (sourceIds) so a call can reach it`);
  return { destination, source };
}

/**
 * A test call goes through the router like any call, so the destination's drop and only rules
 * apply to it: one they refuse would be answered 202 and never arrive. Refused here, saying which
 * rule, so the operator can pick another type or check the rules with a preview.
 */
export function assertFiltersSend(destination: Destination, call: NormalizedCall): void {
  const decision = filtersOf(destination).decide(call);
  if (decision.send) return;
  const rule = `filters[${decision.rule}]${decision.name === undefined ? '' : ` ("${decision.name}")`}`;
  throw new RequestError(
    'conflict',
    `${rule} keeps this test call from destination "${destination.id}" (${decision.reason === 'drop' ? 'its drop condition holds' : 'its only condition does not hold'}); try another type, or POST /destinations/${destination.id}/preview to see why`,
  );
}

/** A sample call of `type` as ingest would have stored it, received at `now` (ISO 8601 UTC). */
export function sampleCall(type: TestSendRequest['type'], messageId: string, now: string, destinationId: string): NormalizedCall {
  const context = {
    eventrelayTestSend: true,
    library: { name: 'eventrelay-test-send', version: '1.0' },
    ip: '203.0.113.7',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
  };
  const base = {
    messageId,
    userId: TEST_SEND_USER_ID,
    timestamp: now,
    originalTimestamp: now,
    sentAt: now,
    receivedAt: now,
    integrations: { All: false, [destinationId]: true },
  };
  switch (type) {
    case 'identify':
      return { ...base, type, traits: { email: 'test@example.com', name: 'Test User', plan: 'pro', createdAt: now }, context };
    case 'track':
      return {
        ...base,
        type,
        event: 'Order Completed',
        properties: { orderId: 'test-order-1001', revenue: 42.5, currency: 'USD', products: [{ productId: 'sku-1', quantity: 1 }] },
        context,
      };
    case 'page':
      return {
        ...base,
        type,
        name: 'Pricing',
        properties: {
          path: '/pricing',
          url: 'https://www.example.com/pricing',
          title: 'Pricing | Example',
          referrer: 'https://www.example.com/',
        },
        context: {
          ...context,
          page: {
            path: '/pricing',
            url: 'https://www.example.com/pricing',
            title: 'Pricing | Example',
            referrer: 'https://www.example.com/',
          },
        },
      };
    case 'screen':
      return {
        ...base,
        type,
        name: 'Home',
        context: {
          ...context,
          device: { model: 'iPhone15,2', type: 'ios' },
          os: { name: 'iOS', version: '17.2' },
          app: { build: '120', name: 'Example', version: '2.4.0' },
        },
      };
    case 'group':
      return { ...base, type, groupId: 'test-group-1', traits: { name: 'Example Inc', industry: 'Software', employees: 42 }, context };
    case 'alias':
      return { ...base, type, previousId: 'eventrelay-test-anonymous', context };
  }
}
