/**
 * Holds the 429 of a request refused over its source's rate limit or budget (docs/intake.md,
 * "Holding refusals"): a client that sends as fast as it is answered, as a flood does, then sends a
 * few requests a second per connection instead of thousands, and its refusals stop costing the
 * intake's CPU that the other sources need. At most `maxHeld` answers wait at once, so that held
 * connections never take what the other sources need either; past it refusals are answered at once.
 */
import { UnavailableError } from '@eventrelay/config';

/** How long to hold `err`'s answer: until the same request would fit its source's limit, at most `holdMs`; 0 for any other error. */
export function holdMsFor(err: unknown, nowMs: number, holdMs: number): number {
  if (!(err instanceof UnavailableError) || holdMs <= 0) return 0;
  if (err.code === 'rate_limited' && err.retryAtMs !== undefined) return Math.max(0, Math.min(holdMs, err.retryAtMs - nowMs));
  return err.code === 'source_over_budget' ? holdMs : 0;
}

export class RefusalHold {
  private held = 0;

  constructor(
    private readonly maxHeld: number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  async hold(ms: number): Promise<void> {
    if (ms <= 0 || this.held >= this.maxHeld) return;
    this.held++;
    try {
      await this.sleep(ms);
    } finally {
      this.held--;
    }
  }
}
