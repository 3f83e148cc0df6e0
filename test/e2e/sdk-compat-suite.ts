/**
 * One compatibility suite, run once per real SDK from npm: the SDK is pointed (host setting only,
 * plus flush/retry settings so the test is fast) at a recording hop in front of the real in-process
 * ingest, sends one call of every type it has with traits/properties, a custom context and
 * integrations, flushes, and the suite checks what landed on the route queue against both what the
 * test asked the SDK to send and what the SDK actually put on the wire.
 */
import { readFileSync } from 'node:fs';
import type { TestIngest } from '../support/ingest';
import { startSdkIngest } from './sdk-ingest';
import { startWireRecorder, wireItems, type WireExchange, type WireRecorder } from './wire-recorder';
import {
  ISO_UTC_MS,
  REWRITTEN_FIELDS,
  callsOf,
  customContext,
  customIntegrations,
  groupTraits,
  isoOf,
  onlyCallWithId,
  pageProperties,
  queuedJobs,
  screenProperties,
  trackProperties,
  userTraits,
  type QueuedCall,
  type QueuedJob,
} from './sdk-common';

export type CallType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias';

/** What the SDK reported for one call once its callback fired. */
export interface SdkOutcome {
  readonly error?: unknown;
  /** The messageId the SDK says it sent, when the SDK exposes it. */
  readonly messageId?: string;
}

/** A thin adapter around one SDK client. */
export interface SdkHarness {
  /** Hands one call to the SDK; settles when the SDK's callback for it fires. */
  send(type: CallType, message: Record<string, unknown>): Promise<SdkOutcome>;
  /** Flushes everything queued (the callbacks of send() fire once delivered). */
  flush(): Promise<void>;
  /** Releases the client (timers, sockets); safe after flush and on failure paths. */
  close(): Promise<void>;
  /** Errors the SDK reported through its error hooks. */
  readonly errors: unknown[];
}

export interface SdkCompatCase {
  /** Used in test names and the Redis prefix. */
  readonly label: string;
  readonly types: readonly CallType[];
  /** Whether the SDK exposes the messageId it generated to the caller (via callback). */
  readonly exposesMessageId: boolean;
  create(host: string, writeKey: string): SdkHarness;
  /** The same client with the SDK's own retries on (few, short), for the lost-answer case. */
  createRetrying(host: string, writeKey: string): SdkHarness;
  /** The context that should reach the queue: the caller's keys plus what this SDK adds. */
  expectedContext(type: CallType, callerContext: Record<string, unknown>, message: Record<string, unknown>): Record<string, unknown>;
  /** SDK-specific wire facts (path, headers, auth form). */
  wireFacts: { title: string; check(exchanges: readonly WireExchange[], writeKey: string): void };
}

export function packageVersion(name: string): string {
  return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
}

/** The calls every SDK is asked to send; one per type, distinct enough to match on the wire. */
function standardMessages(runId: string): Record<CallType, Record<string, unknown>> {
  const userId = `user-${runId}`;
  return {
    identify: { userId, traits: userTraits(), context: customContext(), integrations: customIntegrations() },
    track: {
      userId,
      anonymousId: `anon-${runId}`,
      event: 'Order Completed',
      properties: trackProperties(),
      context: customContext(),
      integrations: customIntegrations(),
    },
    // anonymous only: the intake must accept a call without userId
    page: {
      anonymousId: `anon-${runId}`,
      name: 'Pricing',
      properties: pageProperties(),
      context: customContext(),
      integrations: customIntegrations(),
    },
    screen: { userId, name: 'Settings', properties: screenProperties(), context: customContext(), integrations: customIntegrations() },
    group: { userId, groupId: `group-${runId}`, traits: groupTraits(), context: customContext(), integrations: customIntegrations() },
    alias: { userId, previousId: `anon-${runId}`, context: customContext(), integrations: customIntegrations() },
  };
}

const SETTLE_TIMEOUT_MS = 15_000;

function withTimeout<T>(promise: Promise<T>, what: string, describeState: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not settle within ${SETTLE_TIMEOUT_MS} ms; ${describeState()}`)),
      SETTLE_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function describeExchanges(exchanges: readonly WireExchange[]): string {
  if (exchanges.length === 0) return 'no request reached the recorder';
  return exchanges
    .map(
      (e) =>
        `${e.method} ${e.path} content-type=${String(e.headers['content-type'])} content-encoding=${String(e.headers['content-encoding'])} -> ${e.status} ${e.responseText}`,
    )
    .join('\n');
}

function pick(source: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, source[k]]));
}

export function describeSdkCompat(sdk: SdkCompatCase): void {
  describe(`${sdk.label} against the intake`, () => {
    const runId = `${sdk.label.replace(/\W+/g, '-').replace(/^-/, '')}-${Date.now().toString(36)}`;
    const explicitMessageId = `caller-chosen-${runId}`;
    const messages = standardMessages(runId);
    // Pristine copies: some SDKs write into the objects they are handed.
    const pristine = JSON.parse(JSON.stringify(messages)) as Record<CallType, Record<string, unknown>>;
    const explicitMessage = {
      userId: `user-${runId}`,
      event: 'Explicit Id Checked',
      messageId: explicitMessageId,
      properties: { checked: true },
      context: customContext(),
      integrations: customIntegrations(),
    };

    let t: TestIngest | undefined;
    let wire: WireRecorder | undefined;
    let harness: SdkHarness | undefined;
    const outcomes = new Map<CallType, SdkOutcome>();
    let explicitOutcome: SdkOutcome | undefined;
    let jobs: QueuedJob[] = [];
    let calls: QueuedCall[] = [];

    beforeAll(async () => {
      t = await startSdkIngest(`sdk-${sdk.label}`);
      wire = await startWireRecorder(t.url);
      harness = sdk.create(wire.url, t.writeKey);
      const pending = sdk.types.map(async (type) => [type, await harness!.send(type, messages[type])] as const);
      const explicit = harness.send('track', explicitMessage);
      await harness.flush();
      const w = wire;
      const settled = await withTimeout(Promise.all(pending), `${sdk.label} callbacks`, () => describeExchanges(w.exchanges));
      for (const [type, outcome] of settled) outcomes.set(type, outcome);
      explicitOutcome = await withTimeout(explicit, `${sdk.label} callback of the explicit-messageId call`, () =>
        describeExchanges(w.exchanges),
      );
      jobs = await queuedJobs(t);
      calls = callsOf(jobs);
    });

    afterAll(async () => {
      await harness?.close();
      await wire?.close();
      await t?.close();
    });

    it('gets 200 {"success": true} for every request and reports no delivery error', () => {
      const exchanges = wire!.exchanges;
      expect(exchanges.length).toBeGreaterThan(0);
      expect(exchanges.map((e) => ({ status: e.status, body: e.responseText }))).toEqual(
        exchanges.map(() => ({ status: 200, body: JSON.stringify({ success: true }) })),
      );
      const callbackErrors = [...outcomes.values(), explicitOutcome].map((o) => o?.error).filter((e) => e !== undefined);
      expect(callbackErrors.map(String)).toEqual([]);
      expect(harness!.errors.map(String)).toEqual([]);
    });

    it(sdk.wireFacts.title, () => {
      sdk.wireFacts.check(wire!.exchanges, t!.writeKey);
    });

    it('puts every call on the route queue exactly once, for the test source', () => {
      expect(jobs.map((j) => j.sourceId)).toEqual(jobs.map(() => t!.source.id));
      const sentIds = wireItems(wire!.exchanges).map((w) => w.item['messageId']);
      expect(sentIds).toHaveLength(sdk.types.length + 1);
      expect(calls.map((c) => c.messageId).sort()).toEqual([...sentIds].sort());
      expect(calls.map((c) => c.type).sort()).toEqual([...sdk.types, 'track'].sort());
    });

    it.each([...sdk.types])('%s: type, ids, payload, context and integrations arrive intact', (type) => {
      const sent = pristine[type];
      const { item } = wireItemOf(wire!.exchanges, type, sent);
      const queued = onlyCallWithId(calls, item['messageId'] as string);
      const { context: callerContext, ...fields } = sent;
      expect(queued.type).toBe(type);
      // ids, event/name/groupId/previousId, properties/traits exactly as the caller gave them
      expect(pick(queued, Object.keys(fields))).toEqual(fields);
      expect(queued['context']).toEqual(sdk.expectedContext(type, callerContext as Record<string, unknown>, sent));
      expect(queued['integrations']).toEqual({ All: false, Webhooks: true });
      expect(queued.messageId).toEqual(expect.any(String));
      expect(queued.messageId.length).toBeGreaterThan(0);
    });

    it(
      sdk.exposesMessageId
        ? 'keeps the messageId the SDK reports for every call'
        : 'keeps the messageId the SDK put on the wire for every call (the SDK does not report it)',
      () => {
        for (const type of sdk.types) {
          const { item } = wireItemOf(wire!.exchanges, type, pristine[type]);
          const wireId = item['messageId'];
          expect(typeof wireId).toBe('string');
          if (sdk.exposesMessageId) expect(outcomes.get(type)?.messageId).toBe(wireId);
          expect(onlyCallWithId(calls, wireId as string).type).toBe(type);
        }
      },
    );

    it('keeps a messageId chosen by the caller', () => {
      const queued = onlyCallWithId(calls, explicitMessageId);
      expect(queued).toMatchObject({ type: 'track', event: 'Explicit Id Checked', properties: { checked: true } });
      if (sdk.exposesMessageId) expect(explicitOutcome?.messageId).toBe(explicitMessageId);
    });

    it('carries every other field the SDK sent unchanged (library context, _metadata and the like)', () => {
      for (const { item } of wireItems(wire!.exchanges)) {
        const queued = onlyCallWithId(calls, item['messageId'] as string);
        const keys = Object.keys(item).filter((k) => !REWRITTEN_FIELDS.has(k));
        expect({ messageId: item['messageId'], ...pick(queued, keys) }).toEqual({ messageId: item['messageId'], ...pick(item, keys) });
      }
    });

    it('derives originalTimestamp, sentAt, receivedAt and timestamp from what the SDK sent', () => {
      for (const { item, envelope } of wireItems(wire!.exchanges)) {
        const queued = onlyCallWithId(calls, item['messageId'] as string);
        const sdkTimestamp = isoOf(item['timestamp']) ?? isoOf(item['originalTimestamp']);
        const sdkSentAt = isoOf(item['sentAt']) ?? isoOf(envelope['sentAt']);
        expect(sdkTimestamp).toMatch(ISO_UTC_MS);
        expect(sdkSentAt).toMatch(ISO_UTC_MS);
        expect({ originalTimestamp: queued.originalTimestamp, sentAt: queued.sentAt }).toEqual({
          originalTimestamp: sdkTimestamp,
          sentAt: sdkSentAt,
        });
        expect(queued.receivedAt).toMatch(ISO_UTC_MS);
        expect(queued.timestamp).toMatch(ISO_UTC_MS);
        // one machine, one clock: the skew correction must land close to the SDK's own time
        expect(Math.abs(Date.parse(queued.timestamp) - Date.parse(sdkTimestamp as string))).toBeLessThan(5_000);
        expect(Date.parse(queued.receivedAt)).toBeGreaterThanOrEqual(Date.parse(sdkSentAt as string) - 1_000);
      }
    });
  });

  describe(`${sdk.label} resending after a lost answer`, () => {
    let t: TestIngest | undefined;
    let wire: WireRecorder | undefined;
    let harness: SdkHarness | undefined;
    let outcomes: SdkOutcome[] = [];
    let calls: QueuedCall[] = [];
    const runId = `retry-${Date.now().toString(36)}`;

    beforeAll(async () => {
      t = await startSdkIngest(`sdk-retry-${sdk.label}`);
      wire = await startWireRecorder(t.url, { loseAnswers: 1 });
      harness = sdk.createRetrying(wire.url, t.writeKey);
      const m = standardMessages(runId);
      const pending = [harness.send('identify', m.identify), harness.send('track', m.track)];
      await harness.flush();
      const w = wire;
      outcomes = await withTimeout(Promise.all(pending), `${sdk.label} callbacks`, () => describeExchanges(w.exchanges));
      calls = callsOf(await queuedJobs(t));
    });

    afterAll(async () => {
      await harness?.close();
      await wire?.close();
      await t?.close();
    });

    it('resends the same messageIds, which ingest acknowledges without routing them twice (docs/spec.md §2, dedupe)', () => {
      const exchanges = wire!.exchanges;
      // ingest answered every attempt 200; the recorder turned the first answer into a 503
      expect(exchanges.map((e) => e.status)).toEqual(exchanges.map(() => 200));
      expect(exchanges.filter((e) => e.relayedStatus === 503)).toHaveLength(1);
      expect(
        outcomes
          .map((o) => o.error)
          .filter((e) => e !== undefined)
          .map(String),
      ).toEqual([]);
      const wireIds = wireItems(exchanges).map((w) => w.item['messageId'] as string);
      const distinct = [...new Set(wireIds)].sort();
      expect(distinct).toHaveLength(2);
      // the SDK really did resend something ...
      expect(wireIds.length).toBeGreaterThan(distinct.length);
      // ... and each call is on the queue once
      expect(calls.map((c) => c.messageId).sort()).toEqual(distinct);
    });
  });
}

/** The wire item for one of the standard calls (matched on type and event, never on the explicit-id call). */
function wireItemOf(exchanges: readonly WireExchange[], type: CallType, sent: Record<string, unknown>): { item: Record<string, unknown> } {
  const matches = wireItems(exchanges).filter((w) => w.item['type'] === type && w.item['event'] === sent['event']);
  if (matches.length !== 1)
    throw new Error(`expected one ${type} item on the wire, found ${matches.length}:\n${describeExchanges(exchanges)}`);
  return matches[0] as { item: Record<string, unknown> };
}
