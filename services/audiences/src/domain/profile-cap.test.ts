import { admitProfiles, tallyRefusals } from './profile-cap.js';

const known = (userId: string) => ({ userId, known: true });
const fresh = (userId: string) => ({ userId, known: false });

describe('admitProfiles', () => {
  it('lets every user in below the cap', () => {
    const { admitted, refused } = admitProfiles([known('a'), fresh('b'), fresh('c')], 5, 10);
    expect([...admitted]).toEqual(['a', 'b', 'c']);
    expect(refused).toEqual([]);
  });

  it('at the cap, still updates the profiles the source holds and starts no new one', () => {
    const { admitted, refused } = admitProfiles([fresh('new-1'), known('old-1'), fresh('new-2'), known('old-2')], 3, 3);
    expect([...admitted]).toEqual(['old-1', 'old-2']);
    expect(refused).toEqual(['new-1', 'new-2']);
  });

  it('near the cap, lets new users in, in job order, until it is reached', () => {
    const { admitted, refused } = admitProfiles([fresh('n-1'), known('o-1'), fresh('n-2'), fresh('n-3')], 8, 10);
    expect([...admitted]).toEqual(['n-1', 'o-1', 'n-2']);
    expect(refused).toEqual(['n-3']);
  });

  it('past the cap (a count that grew while the cap was lowered) refuses every new user', () => {
    expect(admitProfiles([fresh('n'), known('o')], 12, 10).refused).toEqual(['n']);
  });

  it('with cap 0 (no cap) lets everybody in', () => {
    const { admitted, refused } = admitProfiles([fresh('a'), fresh('b')], 1_000_000_000, 0);
    expect([...admitted]).toEqual(['a', 'b']);
    expect(refused).toEqual([]);
  });
});

describe('tallyRefusals', () => {
  const MINUTE = 60_000;

  it('logs the first refusal at once', () => {
    expect(tallyRefusals(undefined, 3, 1000, MINUTE)).toEqual({ tally: { loggedAt: 1000, pending: 0 }, log: { refused: 3 } });
  });

  it('then adds up without logging until the interval has passed, and logs the sum', () => {
    let step = tallyRefusals(undefined, 1, 0, MINUTE);
    step = tallyRefusals(step.tally, 5, 10_000, MINUTE);
    expect(step.log).toBeUndefined();
    step = tallyRefusals(step.tally, 7, MINUTE - 1, MINUTE);
    expect(step.log).toBeUndefined();
    expect(step.tally).toEqual({ loggedAt: 0, pending: 12 });
    step = tallyRefusals(step.tally, 2, MINUTE, MINUTE);
    expect(step).toEqual({ tally: { loggedAt: MINUTE, pending: 0 }, log: { refused: 14 } });
  });

  it('logs at most one line per interval however many calls are refused', () => {
    let tally;
    let lines = 0;
    for (let t = 0; t < 10 * MINUTE; t += 100) {
      const step = tallyRefusals(tally, 50, t, MINUTE);
      tally = step.tally;
      if (step.log) lines++;
    }
    expect(lines).toBe(10);
  });
});
