/**
 * The pipeline bench's load generator: sends batches of calls through a sink (HTTP to the intake,
 * or IPC to the baseline producer) either at a fixed offered rate (open loop: batches are due on a
 * schedule whatever the answers, so a slow pipeline cannot slow the load down and hide its own
 * latency) or to saturation (closed loop: keeps up to `windowCalls` calls accepted or in flight
 * but not yet received by the receiver, so every stage has work and no queue grows without bound).
 * Only calls of batches answered 2xx count as accepted.
 */
import { percentiles } from './series.js';

export interface Sink {
  /** Calls per batch. */
  readonly calls: number;
  /** Sends one batch; resolves with the HTTP status (or 200 for an IPC sink), rejects on a transport error. */
  send(): Promise<number>;
  /**
   * Whether the batch the next `send` makes counts toward the saturation window (default: all do).
   * Batches to a receiver that is down or hung by design never arrive while it is, so they ride
   * along at their share of the load instead of filling the window and stalling it.
   */
  nextCounts?(): boolean;
}

type Mode =
  | { kind: 'idle' }
  | { kind: 'rate'; callsPerS: number; startedAt: number; due: number }
  | { kind: 'window'; windowCalls: number; maxRequests: number };

export class LoadDriver {
  /** Calls in batches answered 2xx, since this driver was made. */
  acceptedCalls = 0;
  sentBatches = 0;
  /** Batches answered with another status, and transport errors. */
  refusedBatches = 0;
  errors = 0;
  inFlight = 0;
  /** Calls in batches answered 2xx that count toward the window, and such batches in flight. */
  private countedAccepted = 0;
  private countedInFlight = 0;
  readonly statusCodes: Record<string, number> = {};
  /** Latency (ms) of each request answered 2xx while `recording`. */
  requestMs: number[] = [];
  recording = false;
  /** The receiver's count of every counted call it received (pushed by it). */
  private receivedTotal = 0;
  /** accepted - received at the start of the current load, so that `outstanding` counts this load only. */
  private offset = 0;
  private mode: Mode = { kind: 'idle' };
  private timer: NodeJS.Timeout | undefined;
  private idle: (() => void)[] = [];

  constructor(private readonly sink: Sink) {}

  /** Calls accepted or being sent but not yet at the receiver. */
  get outstanding(): number {
    return this.countedAccepted + this.countedInFlight * this.sink.calls - this.receivedTotal - this.offset;
  }

  received(total: number): void {
    this.receivedTotal = total;
    if (this.mode.kind === 'window') this.pump();
  }

  startRate(callsPerS: number): void {
    this.begin({ kind: 'rate', callsPerS, startedAt: performance.now(), due: 0 });
    this.timer = setInterval(() => this.pump(), 2);
  }

  startWindow(windowCalls: number, maxRequests: number): void {
    this.begin({ kind: 'window', windowCalls, maxRequests });
    // Answers and receiver updates pump too; this only covers a quiet moment.
    this.timer = setInterval(() => this.pump(), 20);
    this.pump();
  }

  /** Stops sending and waits for the answers to the batches already sent. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.mode = { kind: 'idle' };
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private begin(mode: Mode): void {
    if (this.mode.kind !== 'idle') throw new Error('the load driver is already running');
    this.offset = this.countedAccepted - this.receivedTotal;
    this.mode = mode;
  }

  private pump(): void {
    const mode = this.mode;
    if (mode.kind === 'rate') {
      const due = Math.floor((((performance.now() - mode.startedAt) / 1000) * mode.callsPerS) / this.sink.calls);
      while (mode.due < due) {
        mode.due++;
        this.fire();
      }
    } else if (mode.kind === 'window') {
      while (this.inFlight < mode.maxRequests && this.outstanding + this.sink.calls <= mode.windowCalls) this.fire();
    }
  }

  private fire(): void {
    const counted = this.sink.nextCounts?.() ?? true;
    if (counted) this.countedInFlight++;
    this.inFlight++;
    this.sentBatches++;
    const began = performance.now();
    let ok = false;
    void this.sink
      .send()
      .then(
        (status) => {
          this.statusCodes[status] = (this.statusCodes[status] ?? 0) + 1;
          if (status >= 200 && status < 300) {
            ok = true;
            this.acceptedCalls += this.sink.calls;
            if (counted) this.countedAccepted += this.sink.calls;
            if (this.recording) this.requestMs.push(performance.now() - began);
          } else this.refusedBatches++;
        },
        () => {
          this.errors++;
          this.refusedBatches++;
        },
      )
      .finally(() => {
        this.inFlight--;
        if (counted) this.countedInFlight--;
        if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
        // After a refusal or an error the 20 ms timer sends again, not this: no tight loop against a failing sink.
        if (ok && this.mode.kind === 'window') this.pump();
      });
  }
}

/** Nearest-rank percentile of unsorted values, or null when there are none. */
export function percentile(values: readonly number[], q: number): number | null {
  return percentiles(values, { q }).q;
}
