/** The order the load generator sends batches to the sources in. */
import { weightedOrder } from './drive';

describe('weightedOrder', () => {
  it('is plain round-robin when every weight is 1', () => {
    expect(weightedOrder([1, 1, 1, 1])).toEqual([0, 1, 2, 3]);
  });

  it('gives each source its weight per cycle, spread out rather than in a row', () => {
    const order = weightedOrder([3, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(order).toHaveLength(12);
    expect(order.filter((i) => i === 0)).toHaveLength(3);
    for (let i = 1; i < 10; i++) expect(order.filter((x) => x === i)).toHaveLength(1);
    expect(order).toEqual([0, 1, 2, 3, 4, 0, 5, 6, 7, 8, 9, 0]);
  });

  it('refuses a weight that is not a positive integer', () => {
    expect(() => weightedOrder([1, 0])).toThrow('positive integers');
    expect(() => weightedOrder([1.5])).toThrow('positive integers');
  });
});
