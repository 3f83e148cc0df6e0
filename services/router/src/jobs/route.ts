/**
 * The route worker's processor: one route job (a call batch) in; its delivery jobs (one per
 * destination, holding that destination's calls by reference), its profile jobs (for the sources
 * some audience reads) and the batch's "routed" mark out, in ONE MULTI. The mark deletes the
 * batch's route entries, so a route job run again (retried after the router died before finishing
 * it) finds none and adds nothing: what the first run added is all there is. A failure (Redis)
 * throws, and BullMQ retries the job. When some delivery jobs belong to other shards than the
 * batch (EVENTRELAY_SHARDS > 1), one MULTI cannot span them: the mark (which also keeps the plan)
 * and the profile jobs go first, the jobs on their shards next (CallBatches, "two steps"); a run
 * after a crash in between finds the kept plan and adds its jobs again, which changes nothing for
 * those already there.
 */
import type { Job, Queue } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import {
  batchDeliveryJobId,
  legacyRouteJob,
  routeEntryOf,
  type DeliverJob,
  type Destination,
  type LegacyRouteJob,
  type NormalizedCall,
  type ProfileJob,
  type RouteEntry,
  type RouteJob,
} from '@eventrelay/config';
import { execAll, inSlices, queueJobAdd, type Logger } from '@eventrelay/runtime';
import type { CallBatches } from '@eventrelay/stores';
import { decides, readsWholeCall, refusalsOf, type Refusal } from '../domain/filtering.js';
import { planRoute, type RoutePlan } from '../domain/plan-route.js';

type PlannedDelivery = RoutePlan['deliveries'][number];
import type { Suppression } from '../domain/suppression.js';
import type { RouterMetrics } from '../metrics.js';

export interface RouteDeps {
  /** The config as last loaded: destinations per source, and the sources some audience reads. */
  readonly destinations: { forSource(sourceId: string): readonly Destination[]; audienceSources(): ReadonlySet<string> };
  readonly suppressions: {
    count(): Promise<number>;
    lookup(entries: readonly RouteEntry[]): Promise<ReadonlyMap<string, Suppression>>;
  };
  /** The batches of the route shard this processor serves. */
  readonly batches: Pick<CallBatches, 'routeState' | 'readParts' | 'queuePlan' | 'queueHold' | 'prefix'>;
  /** A MULTI on the connection of the queues below (runtime transactionsOn). */
  readonly transaction: () => ChainableCommander;
  /** A pipeline on that connection, for job adds that need no MULTI around them (runtime pipelinesOn). */
  readonly pipeline: () => ChainableCommander;
  /** The deliver queue of a destination's shard. */
  readonly deliverQueueOf: (destinationId: string) => Queue<DeliverJob>;
  /** The audiences service's feed on this route shard; absent when profiles are off (ROUTER_FEED_PROFILES=false). */
  readonly profileQueue?: Queue<ProfileJob>;
  readonly metrics: RouterMetrics;
  readonly logger: Logger;
  readonly clock: () => number;
}

const NONE_SUPPRESSED: ReadonlyMap<string, Suppression> = new Map();
const NO_SOURCES: ReadonlySet<string> = new Set();

export function createRouteProcessor(deps: RouteDeps): (job: Job<RouteJob>) => Promise<void> {
  const { metrics } = deps;
  return async (job) => {
    const started = deps.clock();
    const legacy = legacyRouteJob(job.data);
    if (legacy) return routeLegacy(job, legacy, started);
    const { batchId } = job.data;
    // The suppression count is read with the batch, in parallel, and never cached: that is what
    // makes a SUPPRESS regulation in force once it reports `finished` (docs/spec.md §6). The
    // audiences service writes the suppression before it saves `finished`; a call accepted after
    // a client read `finished` is stored, with its route job, after that; this job was taken after
    // it was added, so both reads below are sent after the suppression was written, and one Redis
    // applies commands in order (with shards the count is its copy on this shard, written before
    // `finished` too: ShardCounts). While nobody is suppressed the count is 0 and no lookup is made.
    const [{ entries, kept }, suppressed] = await Promise.all([deps.batches.routeState(batchId), deps.suppressions.count()]);
    if (entries === undefined) {
      // Routed before (this is a retry after a crash), or every call of the flush was a duplicate.
      // Routed in two steps, the second may not have run: its job adds are made again.
      const deliveries = kept === undefined ? [] : (JSON.parse(kept) as PlannedDelivery[]);
      await addOnShards(batchId, deliveries);
      deps.logger.info(
        { batchId, calls: 0, deliveries: 0, jobsAddedAgain: deliveries.length, attempt: job.attemptsMade + 1, ms: deps.clock() - started },
        'call.routed',
      );
      return;
    }
    // One view of the config for the whole job: a reload meanwhile must not pair a rule that
    // tests a property with a route entry read without its call.
    const connected = connectedOnce();
    const profiled = profiledSources();
    const [suppressions, wholeCall] = await Promise.all([
      suppressed > 0 ? deps.suppressions.lookup(entries) : NONE_SUPPRESSED,
      wholeCallsFor(batchId, entries, connected),
    ]);
    const plan = planRoute(entries, connected, suppressions, profiled, await refusalsFor(entries, connected, wholeCall));
    if (plan.deliveries.every((d) => deps.deliverQueueOf(d.destinationId).opts.prefix === deps.batches.prefix)) {
      const tx = deps.transaction();
      deps.batches.queuePlan(
        tx,
        batchId,
        plan.deliveries.map((d) => d.destinationId),
      );
      for (const d of plan.deliveries) queueDelivery(tx, batchId, d);
      queueProfiles(tx, plan, batchId);
      await execAll(tx);
    } else await routeAcrossShards(batchId, plan);
    account(job, batchId, entries, plan, started);
  };

  /**
   * The calls themselves, for the sources with a destination whose filters test fields the route
   * entries lack: one read of those sources' fields of the batch, none when no filter needs it.
   */
  async function wholeCallsFor(
    batchId: string,
    entries: readonly RouteEntry[],
    connected: (sourceId: string) => readonly Destination[],
  ): Promise<(entry: RouteEntry) => NormalizedCall | undefined> {
    const parts = new Set<number>();
    const reading = new Map<string, boolean>();
    for (const entry of entries) {
      let reads = reading.get(entry.sourceId);
      if (reads === undefined) reading.set(entry.sourceId, (reads = connected(entry.sourceId).some(readsWholeCall)));
      if (reads) parts.add(entry.part);
    }
    if (parts.size === 0) return () => undefined;
    const calls = await deps.batches.readParts(batchId, [...parts]);
    metrics.wholeCallReads.inc();
    return (entry) => calls.get(entry.part)?.[entry.index - entry.part];
  }

  /**
   * What the destinations' drop and only rules refuse, decided ahead a slice at a time: each call's
   * rules are bounded (docs/filters.md), and the slices keep a batch of them from holding the event
   * loop. Undefined, with no pass over the calls, when no destination of the batch's sources has such rules.
   */
  async function refusalsFor(
    entries: readonly RouteEntry[],
    connected: (sourceId: string) => readonly Destination[],
    wholeCall: (entry: RouteEntry) => NormalizedCall | undefined,
  ): Promise<((entry: RouteEntry, destination: Destination) => Refusal | undefined) | undefined> {
    const deciding = new Map<string, boolean>();
    const decidesFor = (sourceId: string) => {
      let any = deciding.get(sourceId);
      if (any === undefined) deciding.set(sourceId, (any = connected(sourceId).some(decides)));
      return any;
    };
    if (!entries.some((e) => decidesFor(e.sourceId))) return undefined;
    const refusals = new Map<RouteEntry, Map<string, Refusal>>();
    await inSlices(entries, (entry) => {
      const refused = decidesFor(entry.sourceId) ? refusalsOf(entry, connected(entry.sourceId), wholeCall(entry)) : undefined;
      if (refused) refusals.set(entry, refused);
    });
    return (entry, d) => refusals.get(entry)?.get(d.id);
  }

  /** The destinations of each source as configured when first asked, for the rest of the job. */
  function connectedOnce(): (sourceId: string) => readonly Destination[] {
    const seen = new Map<string, readonly Destination[]>();
    return (sourceId) => {
      let destinations = seen.get(sourceId);
      if (!destinations) seen.set(sourceId, (destinations = deps.destinations.forSource(sourceId)));
      return destinations;
    };
  }

  /** The sources whose calls feed profiles: none at all while profiles are off (ROUTER_FEED_PROFILES=false). */
  function profiledSources(): ReadonlySet<string> {
    return deps.profileQueue ? deps.destinations.audienceSources() : NO_SOURCES;
  }

  function queueDelivery(tx: ChainableCommander, batchId: string, d: PlannedDelivery): void {
    queueJobAdd(
      tx,
      deps.deliverQueueOf(d.destinationId),
      { destinationId: d.destinationId, batch: { id: batchId, parts: d.parts } },
      batchDeliveryJobId(d.destinationId, batchId),
    );
  }

  /** The two steps (module comment); the plan kept by the first run is the one carried out. */
  async function routeAcrossShards(batchId: string, plan: RoutePlan): Promise<void> {
    const planned = JSON.stringify(plan.deliveries);
    const tx = deps.transaction();
    deps.batches.queueHold(
      tx,
      batchId,
      planned,
      plan.deliveries.map((d) => d.destinationId),
    );
    queueProfiles(tx, plan, batchId);
    const [kept] = (await execAll(tx)) as [string | null];
    // Routed meanwhile by another run without a plan: nothing is left to do.
    if (kept === null) return;
    await addOnShards(batchId, kept === planned ? plan.deliveries : (JSON.parse(kept) as PlannedDelivery[]));
  }

  /**
   * The delivery jobs, one pipeline per deliver shard: no MULTI is needed, since each add stands
   * alone (a job with its id still queued is not added again).
   */
  async function addOnShards(batchId: string, deliveries: readonly PlannedDelivery[]): Promise<void> {
    const byQueue = new Map<Queue<DeliverJob>, PlannedDelivery[]>();
    for (const d of deliveries) {
      const queue = deps.deliverQueueOf(d.destinationId);
      const group = byQueue.get(queue);
      if (group) group.push(d);
      else byQueue.set(queue, [d]);
    }
    await Promise.all(
      [...byQueue.values()].map((group) => {
        const pipeline = deps.pipeline();
        for (const d of group) queueDelivery(pipeline, batchId, d);
        return execAll(pipeline);
      }),
    );
  }

  // Profiles apply each messageId once (the profile remembers the latest ones), so a profile job
  // added again after its first run was removed changes nothing.
  function queueProfiles(tx: ChainableCommander, plan: RoutePlan, batchId: string): void {
    if (deps.profileQueue)
      plan.profiles.forEach((p, i) => queueJobAdd(tx, deps.profileQueue!, { sourceId: p.sourceId, calls: p.calls }, `p-${batchId}-${i}`));
  }

  /**
   * A route job written before jobs carried batches (queued across an upgrade): its calls are in
   * the job, so its delivery jobs hold them too, one per destination.
   */
  async function routeLegacy(job: Job<RouteJob>, legacy: LegacyRouteJob, started: number): Promise<void> {
    const entries = legacy.calls.map((call, i) => routeEntryOf(call, legacy.sourceId, i, 0));
    // No batch read to pair a count with: the lookup itself (one round trip) reads after the job
    // was taken, which keeps the ordering argument above.
    const plan = planRoute(entries, connectedOnce(), await deps.suppressions.lookup(entries), profiledSources(), (entry, d) =>
      refusalsOf(entry, [d], legacy.calls[entry.index])?.get(d.id),
    );
    // Legacy jobs predate shards: with one shard these adds are one MULTI, as before.
    const tx = deps.transaction();
    for (const d of plan.deliveries) {
      const calls = d.parts.flatMap((p) => p.indexes.map((i) => ({ sourceId: legacy.sourceId, call: legacy.calls[i]! })));
      queueJobAdd(
        tx,
        deps.deliverQueueOf(d.destinationId),
        { destinationId: d.destinationId, calls },
        batchDeliveryJobId(d.destinationId, legacy.requestId),
      );
    }
    queueProfiles(tx, plan, legacy.requestId);
    await execAll(tx);
    account(job, legacy.requestId, entries, plan, started);
  }

  /** The metrics and the one log line of a routed job. */
  function account(job: Job<RouteJob>, batchId: string, entries: readonly RouteEntry[], plan: RoutePlan, started: number): void {
    const routed = entries.length - plan.suppressed - plan.unrouted;
    metrics.calls.inc({ result: 'routed' }, routed);
    if (plan.suppressed > 0) {
      metrics.calls.inc({ result: 'suppressed' }, plan.suppressed);
      metrics.filtered.inc({ reason: 'suppression' }, plan.suppressed);
    }
    if (plan.turnedOff > 0) metrics.filtered.inc({ reason: 'integrations' }, plan.turnedOff);
    if (plan.filtered.drop > 0) metrics.filtered.inc({ reason: 'filter_drop' }, plan.filtered.drop);
    if (plan.filtered.only > 0) metrics.filtered.inc({ reason: 'filter_only' }, plan.filtered.only);
    for (const n of plan.fanout) metrics.fanout.observe(n);
    if (plan.unrouted > 0) metrics.calls.inc({ result: 'unrouted' }, plan.unrouted);
    metrics.deliveries.inc(plan.routedPairs);
    metrics.batchCalls.observe(entries.length);
    const ms = deps.clock() - started;
    metrics.routeSeconds.observe(ms / 1000);
    deps.logger.info(
      {
        batchId,
        calls: entries.length,
        sources: new Set(entries.map((e) => e.sourceId)).size,
        deliveries: plan.routedPairs,
        jobs: plan.deliveries.length,
        suppressed: plan.suppressed,
        ...(plan.filtered.drop + plan.filtered.only > 0 ? { filtered: plan.filtered.drop + plan.filtered.only } : {}),
        unrouted: plan.unrouted,
        attempt: job.attemptsMade + 1,
        ms,
      },
      'call.routed',
    );
  }
}
