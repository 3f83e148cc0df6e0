/**
 * The scenario bench's load generator: sends batches of calls through a sink (HTTP to the intake,
 * or IPC to the baseline producer) either at a fixed offered rate (open loop: batches are due on a
 * schedule whatever the answers, so a slow pipeline cannot slow the load down and hide its own
 * latency) or to saturation (closed loop: keeps up to `windowCalls` calls accepted or in flight
 * but not yet received by the receiver, so every stage has work and no queue grows without bound).
 * Only calls of batches answered 2xx count as accepted.
 */
export interface Sink {
  /** Calls per batch. */
  readonly calls: number;
  /** Sends one batch; resolves with the HTTP status (200 for an IPC sink), rejects on a transport error. */
  send(): Promise<number>;
  /**
   * Whether the batch the next `send` makes counts toward the saturation window (default: all do).
   * Batches to a receiver that is down or hung by design never arrive while it is, so they ride
   * along at their share of the load instead of filling the window and stalling it.
   */
  nextCounts?(): boolean;
}

type Mode =
  { kind: 'idle' } | { kind: 'rate'; callsPerS: number; startedAt: number; due: number } | { kind: 'window'; calls: number; max: number };

export class LoadDriver {
  /** Calls in batches answered 2xx. */
  acceptedCalls = 0;
  /** Batches answered with another status, or lost to a transport error (`errors`). */
  refusedBatches = 0;
  errors = 0;
  readonly statusCodes: Record<string, number> = {};
  /** Latency (ms) of each request answered 2xx while `recording`. */
  readonly requestMs: number[] = [];
  recording = false;
  private inFlight = 0;
  /** Counted calls accepted, counted batches in flight, the receiver's count of counted calls (pushed by it). */
  private countedAccepted = 0;
  private countedInFlight = 0;
  private receivedTotal = 0;
  /** accepted - received when the load started, so that the window counts this load only. */
  private offset = 0;
  private mode: Mode = { kind: 'idle' };
  private timer: NodeJS.Timeout | undefined;
  private idle: (() => void)[] = [];

  constructor(private readonly sink: Sink) {}

  received(total: number): void {
    this.receivedTotal = total;
    if (this.mode.kind === 'window') this.pump();
  }

  startRate(callsPerS: number): void {
    this.begin({ kind: 'rate', callsPerS, startedAt: performance.now(), due: 0 }, 2);
  }

  startWindow(calls: number, maxRequests: number): void {
    // Answers and receiver updates pump too; the timer only covers a quiet moment.
    this.begin({ kind: 'window', calls, max: maxRequests }, 20);
    this.pump();
  }

  /** Stops sending and waits for the answers to the batches already sent. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.mode = { kind: 'idle' };
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private begin(mode: Mode, everyMs: number): void {
    if (this.mode.kind !== 'idle') throw new Error('the load driver is already running');
    this.offset = this.countedAccepted - this.receivedTotal;
    this.mode = mode;
    this.timer = setInterval(() => this.pump(), everyMs);
  }

  private pump(): void {
    const m = this.mode;
    const calls = this.sink.calls;
    if (m.kind === 'rate') {
      const due = Math.floor((((performance.now() - m.startedAt) / 1000) * m.callsPerS) / calls);
      for (; m.due < due; m.due++) this.fire();
    } else if (m.kind === 'window') {
      const outstanding = () => this.countedAccepted + this.countedInFlight * calls - this.receivedTotal - this.offset;
      while (this.inFlight < m.max && outstanding() + calls <= m.calls) this.fire();
    }
  }

  private fire(): void {
    const counted = this.sink.nextCounts?.() ?? true;
    if (counted) this.countedInFlight++;
    this.inFlight++;
    const began = performance.now();
    let ok = false;
    void this.sink
      .send()
      .then(
        (status) => {
          this.statusCodes[status] = (this.statusCodes[status] ?? 0) + 1;
          ok = status >= 200 && status < 300;
          if (!ok) return void this.refusedBatches++;
          this.acceptedCalls += this.sink.calls;
          if (counted) this.countedAccepted += this.sink.calls;
          if (this.recording) this.requestMs.push(performance.now() - began);
        },
        () => void (this.errors++, this.refusedBatches++),
      )
      .finally(() => {
        this.inFlight--;
        if (counted) this.countedInFlight--;
        if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
        // After a refusal or an error the timer sends again, not this: no tight loop against a failing sink.
        if (ok && this.mode.kind === 'window') this.pump();
      });
  }
}

/**
 * One cycle of source indices in which source i comes weights[i] times, spread out (smooth weighted
 * round-robin, as nginx balances upstreams): all weights 1 is plain round-robin, 0, 1, …, n - 1.
 */
export function weightedOrder(weights: readonly number[]): number[] {
  if (weights.some((w) => !Number.isInteger(w) || w < 1)) throw new Error(`weights must be positive integers, got ${weights.join(', ')}`);
  const total = weights.reduce((a, b) => a + b, 0);
  const current = weights.map(() => 0);
  const order: number[] = [];
  for (let k = 0; k < total; k++) {
    let best = 0;
    for (let i = 0; i < weights.length; i++) {
      current[i] = (current[i] as number) + (weights[i] as number);
      if ((current[i] as number) > (current[best] as number)) best = i;
    }
    current[best] = (current[best] as number) - total;
    order.push(best);
  }
  return order;
}

/**
 * Batches sent on a schedule for the benches that measure at a fixed rate (stats, cluster): batch
 * i is due i / perSecond seconds after the start whatever the answers (open loop), with at most 50
 * unanswered; `batchOf(i)` says which write key and calls it carries. Rejects on the first answer
 * that is not 200: these benches measure a healthy pipeline.
 */
export async function sendBatchesOpenLoop(
  ingestUrl: string,
  count: number,
  perSecond: number,
  batchOf: (i: number) => { readonly writeKey: string; readonly calls: readonly Record<string, unknown>[] },
): Promise<void> {
  const t0 = Date.now();
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; i < count; i++) {
    const due = t0 + (i * 1000) / perSecond;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    while (inFlight.size >= 50) await Promise.race(inFlight);
    const { writeKey, calls } = batchOf(i);
    const sent = fetch(`${ingestUrl}/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` },
      body: JSON.stringify({ batch: calls }),
    }).then(async (res) => {
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`intake answered ${res.status}`);
    });
    const tracked = sent.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  }
  await Promise.all(inFlight);
}
