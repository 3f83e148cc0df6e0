import { inSlices } from './in-slices.js';

describe('inSlices', () => {
  it('runs every step in order, giving the event loop a turn after each slice of work', async () => {
    let clock = 0;
    const seen: number[] = [];
    const turns: number[] = [];
    // Each step "takes" 2 ms; with 5 ms slices the loop gets a turn after every third step.
    let done = false;
    const watch = () => {
      turns.push(seen.length);
      if (!done) setImmediate(watch);
    };
    setImmediate(watch);
    await inSlices(
      [1, 2, 3, 4, 5, 6, 7],
      (n) => {
        seen.push(n);
        clock += 2;
      },
      5,
      () => clock,
    );
    done = true;
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // The other work ran after the third and the sixth step: mid-way, not only at the end.
    expect(turns).toEqual(expect.arrayContaining([3, 6]));
    expect(turns.filter((n) => n < 7)).not.toContain(0);
  });

  it('takes no turn when the work is quick', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('other'));
    await inSlices(
      [1, 2, 3],
      () => order.push('step'),
      5,
      () => 0,
    );
    order.push('done');
    expect(order.slice(0, 4)).toEqual(['step', 'step', 'step', 'done']);
  });
});
