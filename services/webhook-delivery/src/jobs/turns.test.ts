import type { DeliverJob } from '@eventrelay/config';
import { parkedForTurn, turnOf, type TurnDeps } from './turns.js';

const NOW = Date.parse('2026-11-28T10:00:00.000Z');
const JOB: DeliverJob = { destinationId: 'd1', batch: { id: 'b1', parts: [{ part: 0, sourceId: 's1', indexes: [0, 1] }] } };

/** Deps whose Redis slots answer `answer`, recording each reservation's arguments. */
function deps(answer: { granted: boolean; waitMs: number } = { granted: true, waitMs: 0 }) {
  const reserved: unknown[][] = [];
  const d: TurnDeps = {
    rateSlots: { reserve: (...args: unknown[]) => (reserved.push(args), Promise.resolve(answer)) },
    maxSlotWaitMs: 1000,
    clock: () => NOW,
  };
  return { d, reserved };
}

describe('turnOf', () => {
  it('without maxRequestsPerSecond, follows the gate: now, or later at its turn', async () => {
    const { d, reserved } = deps();
    expect(await turnOf(d, JOB, { kind: 'go' }, 2, undefined)).toEqual({ kind: 'now' });
    expect(await turnOf(d, JOB, { kind: 'turn', at: NOW + 3000 }, 2, undefined)).toEqual({ kind: 'later', at: NOW + 3000, booked: true });
    expect(reserved).toEqual([]);
  });

  it('takes the slots from the gate’s turn on, and parks a job whose first slot is more than maxSlotWaitMs off', async () => {
    const soon = deps({ granted: true, waitMs: 0 });
    expect(await turnOf(soon.d, JOB, { kind: 'go' }, 2, 50)).toEqual({ kind: 'now' });
    expect(soon.reserved).toEqual([['d1', 50, 2, 5 * 60 * 1000, 0]]);
    const far = deps({ granted: true, waitMs: 4000 });
    expect(await turnOf(far.d, JOB, { kind: 'go' }, 2, 50)).toEqual({ kind: 'later', at: NOW + 4000, booked: true });
    const behindGate = deps({ granted: true, waitMs: 3500 });
    expect(await turnOf(behindGate.d, JOB, { kind: 'turn', at: NOW + 3000 }, 2, 50)).toEqual({
      kind: 'later',
      at: NOW + 3500,
      booked: true,
    });
    expect(behindGate.reserved[0]?.[4]).toBe(3000);
  });

  it('parks without booking when more than five minutes of slots are taken', async () => {
    const { d } = deps({ granted: false, waitMs: 400_000 });
    expect(await turnOf(d, JOB, { kind: 'go' }, 2, 50)).toEqual({ kind: 'later', at: NOW + 400_000, booked: false });
  });

  it('a job back before its turn sends on the slots it holds; one back after it takes new ones', async () => {
    const { d, reserved } = deps({ granted: true, waitMs: 0 });
    expect(await turnOf(d, { ...JOB, turnAt: NOW }, { kind: 'go' }, 2, 50)).toEqual({ kind: 'now' });
    expect(reserved).toEqual([]);
    expect(await turnOf(d, { ...JOB, turnAt: NOW - 1 }, { kind: 'go' }, 2, 50)).toEqual({ kind: 'now' });
    expect(reserved).toHaveLength(1);
  });
});

describe('parkedForTurn', () => {
  it('is due a little before a booked turn and carries it; an unbooked one is due at its time, data unchanged', () => {
    expect(parkedForTurn(JOB, { kind: 'later', at: NOW + 5000, booked: true }, NOW)).toEqual({
      at: NOW + 4900,
      data: { ...JOB, turnAt: NOW + 5000 },
    });
    expect(parkedForTurn(JOB, { kind: 'later', at: NOW + 50, booked: true }, NOW).at).toBe(NOW);
    expect(parkedForTurn(JOB, { kind: 'later', at: NOW + 5000, booked: false }, NOW)).toEqual({ at: NOW + 5000 });
  });
});
