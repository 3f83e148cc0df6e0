/**
 * The per-source profile cap (AUDIENCES_MAX_PROFILES_PER_SOURCE). A source's calls may keep
 * updating the profiles it already holds, but past the cap they start no new one: a flood of fresh
 * userIds through one write key then stops costing Redis memory at the cap, instead of filling
 * Redis for every source. Pure: the profile store reads the facts, the profile job applies the
 * answer.
 */

/** What the store knows of one user of a profile job, for the job's source. */
export interface UserStanding {
  readonly userId: string;
  /** The source already holds a profile of this user (or a part of one). */
  readonly known: boolean;
}

export interface Admission {
  /** Users whose calls are applied: every known one, and new ones while there was room. */
  readonly admitted: ReadonlySet<string>;
  /** New users left out: the source was at its cap. */
  readonly refused: readonly string[];
}

/**
 * Which users of one job get their calls applied, given how many profiles the source holds
 * (`held`) and its `cap` (0 = no cap). New users are let in, in job order, until the job would take
 * the source past the cap.
 */
export function admitProfiles(users: readonly UserStanding[], held: number, cap: number): Admission {
  const admitted = new Set<string>();
  const refused: string[] = [];
  let room = cap === 0 ? Number.POSITIVE_INFINITY : Math.max(0, cap - held);
  for (const u of users) {
    if (u.known) admitted.add(u.userId);
    else if (room > 0) {
      admitted.add(u.userId);
      room--;
    } else refused.push(u.userId);
  }
  return { admitted, refused };
}

/** Calls refused since the source's last log line, and when that line was written. */
export interface RefusalTally {
  readonly loggedAt: number;
  readonly pending: number;
}

/**
 * Adds `refused` calls to a source's tally, and says whether to log now: at the first refusal, then
 * at most once per `intervalMs`, with everything refused since the previous line. A flood past the
 * cap refuses thousands of calls a second; one log line each would be a second flood.
 */
export function tallyRefusals(
  tally: RefusalTally | undefined,
  refused: number,
  now: number,
  intervalMs: number,
): { readonly tally: RefusalTally; readonly log?: { readonly refused: number } } {
  const pending = (tally?.pending ?? 0) + refused;
  if (tally === undefined || now - tally.loggedAt >= intervalMs) return { tally: { loggedAt: now, pending: 0 }, log: { refused: pending } };
  return { tally: { loggedAt: tally.loggedAt, pending } };
}
