/**
 * The line of jobs waiting at a busy destination (at its cap, still answering): oldest work first,
 * and only as much of it waiting in-process as the destination takes in about `horizonMs`. The rest
 * are parked until about their turn instead of each waiting out a timeout, parking for a
 * moment and coming back to the end of the line again and again: at saturation that cycle cost
 * about a delivery per fetch, and shuffled a recovering destination's backlog so that its last
 * calls went only when the load stopped (flapping at saturation, issue 31). Pure.
 *
 * The order is per process: each webhook-delivery replica keeps its own line for a destination.
 */

export interface InLine {
  /** When the job's work was queued (the job's creation): its place in the line. */
  readonly queuedAt: number;
  /** Requests the job reserves when admitted. */
  readonly requests: number;
}

/** Where a job queued at `queuedAt` joins a line kept oldest first: after every job queued at or before it. */
export function placeInLine(line: readonly InLine[], queuedAt: number): number {
  let i = line.length;
  while (i > 0 && (line[i - 1] as InLine).queuedAt > queuedAt) i--;
  return i;
}

/**
 * The jobs past the line's first `horizonMs` at `perSecond` requests admitted (the rate the line
 * moves at), each with about how long until its turn, in line order. Empty while nothing was
 * measured: the line then waits as it is.
 */
export function pastHorizon(line: readonly InLine[], perSecond: number, horizonMs: number): { index: number; turnInMs: number }[] {
  if (!(perSecond > 0)) return [];
  const out: { index: number; turnInMs: number }[] = [];
  let ahead = 0;
  line.forEach((job, index) => {
    const turnInMs = (ahead / perSecond) * 1000;
    if (turnInMs >= horizonMs) out.push({ index, turnInMs });
    ahead += job.requests;
  });
  return out;
}
