/**
 * CPU work over many items without holding the event loop: `step` runs item by item, and after
 * every `sliceMs` of work the loop gets a turn (setImmediate) for the requests, timers and lock
 * renewals waiting on it. Each step must be bounded on its own (filters and mappings are, by their
 * save-time limits); this keeps many bounded steps from adding up to one long stall.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

const SLICE_MS = 5;

export async function inSlices<T>(
  items: Iterable<T>,
  step: (item: T) => void,
  sliceMs = SLICE_MS,
  now: () => number = () => performance.now(),
): Promise<void> {
  let sliceStart = now();
  for (const item of items) {
    step(item);
    if (now() - sliceStart >= sliceMs) {
      await nextTurn();
      sliceStart = now();
    }
  }
}
