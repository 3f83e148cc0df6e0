/**
 * What webhook-delivery does about a destination's health besides sending: the jobs parked for
 * its circuit breaker (woken when it closes, or when the destination is disabled or deleted
 * meanwhile), operators told of breaker changes, disabled URLs and destinations and the first dead
 * letters of an hour, a URL that answered 410 Gone disabled, and the auto-disable.
 */
import type { Job } from 'bullmq';
import type { DeadLetter, Destination } from '@eventrelay/config';
import type { Logger } from '@eventrelay/runtime';
import type { DestinationEpisodes } from '../adapters/destination-episodes.js';
import type { DestinationSwitches } from '../adapters/destination-switches.js';
import type { DestinationGate } from '../destination-gate.js';
import type { Breaker } from '../domain/breaker.js';
import type { CallRun } from '../domain/settle.js';
import type { DeliveryMetrics } from '../metrics.js';
import { activeTargets } from './deliver-round.js';
import type { OperatorEvents } from './operator-events.js';
import { originOf } from '../domain/url-origin.js';

interface HealthDeps {
  readonly destinations: { get(id: string): Destination | undefined; refresh(): Promise<void>; onLoad?(listener: () => void): void };
  readonly gate: Pick<DestinationGate, 'onBreakerChange'>;
  readonly events: OperatorEvents;
  readonly episodes: Pick<DestinationEpisodes, 'breakerOpened' | 'breakerClosed' | 'deadLettering'>;
  readonly switches: DestinationSwitches;
  readonly metrics: DeliveryMetrics;
  readonly logger: Logger;
  readonly clock: () => number;
}

export function createDestinationHealth(deps: HealthDeps) {
  const { metrics, logger } = deps;
  /** Jobs parked while their destination's breaker is open, woken when it closes. */
  const waiting = new Map<string, Map<string, Job>>();
  deps.gate.onBreakerChange((destinationId, change, breaker) => void noteBreaker(destinationId, change, breaker));
  // A destination disabled or deleted while its jobs wait for its breaker: they come back now, to
  // be dead-lettered or dropped, rather than when their park ends.
  deps.destinations.onLoad?.(() => {
    for (const id of [...waiting.keys()]) {
      const destination = deps.destinations.get(id);
      if (!destination?.enabled || activeTargets(destination).length === 0) wake(id);
    }
  });

  /** A breaker of this process changed: wake the jobs it parked, and tell operators once per episode. */
  async function noteBreaker(destinationId: string, change: 'opened' | 'closed', breaker: Breaker): Promise<void> {
    metrics.breakerChanges.inc({ destination: destinationId, to: change === 'opened' ? 'open' : 'closed' });
    try {
      if (change === 'opened') {
        logger.warn({ destinationId }, 'delivery.breaker_opened');
        if (await deps.episodes.breakerOpened(destinationId, breaker.openedAt))
          await deps.events.record(
            'destination.breaker_opened',
            destinationId,
            { reason: 'at least half of the attempts of the last 10 s failed, or 20 in a row did (5xx, 408, timeouts, connection errors)' },
            'delivery.breaker_opened_notified',
          );
        return;
      }
      logger.info({ destinationId, woken: wake(destinationId) }, 'delivery.breaker_closed');
      const began = await deps.episodes.breakerClosed(destinationId);
      if (began !== undefined)
        await deps.events.record(
          'destination.breaker_closed',
          destinationId,
          { openForMs: deps.clock() - began },
          'delivery.breaker_closed_notified',
        );
    } catch (err) {
      logger.warn({ destinationId, change, err: String(err) }, 'delivery.breaker_note_failed');
    }
  }

  /** Wakes the jobs this process parked for the destination's breaker; returns how many. */
  function wake(destinationId: string): number {
    const parked = waiting.get(destinationId);
    waiting.delete(destinationId);
    // A job that already came back, or that another process took, is not delayed any more.
    for (const job of parked?.values() ?? []) void job.promote().catch(() => undefined);
    return parked?.size ?? 0;
  }

  /** The first commit of an hour with dead letters for a destination tells operators. */
  async function noteDeadLetters(destinationId: string, letters: readonly DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    try {
      if (await deps.episodes.deadLettering(destinationId))
        await deps.events.record(
          'destination.dead_lettering',
          destinationId,
          { deadLettered: letters.length, reason: letters[0]?.lastError },
          'delivery.dead_lettering',
        );
    } catch (err) {
      logger.warn({ destinationId, err: String(err) }, 'delivery.dead_letter_note_failed');
    }
  }

  /** URLs that answered 410 Gone are disabled, for every call from now on (docs/receivers.md). */
  async function disableGoneUrls(destinationId: string, calls: readonly CallRun[]): Promise<void> {
    const gone = new Set<string>();
    for (const c of calls) for (const a of c.attempts) if (a.status === 410) gone.add(a.url);
    if (gone.size === 0) return;
    for (const url of gone) {
      const reason = `answered 410 Gone at ${new Date(deps.clock()).toISOString()}`;
      if (await deps.switches.disableUrl(destinationId, url, reason))
        await deps.events.record('destination.url_disabled', destinationId, { url: originOf(url), reason }, 'delivery.url_disabled');
    }
    await deps.destinations.refresh();
  }

  /**
   * The breaker has been open for the destination's `autoDisableAfterMs`: disable it. True when
   * it is disabled now (by this process or another): its calls are dead letters at their next run.
   */
  async function autoDisable(destination: Destination, breaker: Breaker): Promise<boolean> {
    const after = destination.settings.autoDisableAfterMs;
    const openForMs = deps.clock() - breaker.openedAt;
    if (after === undefined || breaker.state === 'closed' || openForMs < after) return false;
    const disabled = await deps.switches.disableDestination(destination.id);
    await deps.destinations.refresh();
    // Its waiting calls become dead letters now rather than when their park ends.
    wake(destination.id);
    if (disabled)
      await deps.events.record(
        'destination.auto_disabled',
        destination.id,
        { openForMs, autoDisableAfterMs: after, reason: `its circuit breaker stayed open for ${Math.round(openForMs / 1000)} s` },
        'delivery.auto_disabled',
      );
    return true;
  }

  /** A job parked for the breaker, to wake when it closes. */
  function remember(destinationId: string, job: Job): void {
    if (job.id === undefined) return;
    let jobs = waiting.get(destinationId);
    if (!jobs) waiting.set(destinationId, (jobs = new Map<string, Job>()));
    jobs.set(job.id, job);
  }

  /** A job is running again: nothing to wake for it. */
  function returned(job: Job<{ destinationId: string }>): void {
    if (job.id !== undefined) waiting.get(job.data.destinationId)?.delete(job.id);
  }

  return { remember, returned, noteDeadLetters, disableGoneUrls, autoDisable };
}
