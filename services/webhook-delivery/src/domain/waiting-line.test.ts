import { pastHorizon, placeInLine, type InLine } from './waiting-line.js';

const job = (queuedAt: number, requests = 1): InLine => ({ queuedAt, requests });

describe('placeInLine', () => {
  it('puts the youngest at the end, an older job before every younger one, a tie after its equals', () => {
    const line = [job(10), job(20), job(20), job(30)];
    expect(placeInLine(line, 40)).toBe(4);
    expect(placeInLine(line, 15)).toBe(1);
    expect(placeInLine(line, 20)).toBe(3);
    expect(placeInLine(line, 5)).toBe(0);
    expect(placeInLine([], 5)).toBe(0);
  });
});

describe('pastHorizon', () => {
  it('keeps the jobs admitted within the horizon and gives the others about their turn', () => {
    // 10 requests admitted a second: a job of 5 requests every half second.
    const line = Array.from({ length: 5 }, (_, i) => job(i, 5));
    expect(pastHorizon(line, 10, 1000)).toEqual([
      { index: 2, turnInMs: 1000 },
      { index: 3, turnInMs: 1500 },
      { index: 4, turnInMs: 2000 },
    ]);
  });

  it('counts the requests ahead, not the jobs', () => {
    const line = [job(1, 20), job(2, 1), job(3, 1)];
    expect(pastHorizon(line, 10, 1000)).toEqual([
      { index: 1, turnInMs: 2000 },
      { index: 2, turnInMs: 2100 },
    ]);
  });

  it('parks nobody before a rate was measured', () => {
    const line = [job(1, 20), job(2, 20)];
    expect(pastHorizon(line, 0, 1000)).toEqual([]);
    expect(pastHorizon(line, NaN, 1000)).toEqual([]);
  });
});
