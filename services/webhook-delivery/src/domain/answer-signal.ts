/**
 * What an attempt's answer says about the receiver's capacity, for the adaptive limit and the
 * circuit breaker (docs/delivery.md, "Receiver-friendly delivery"). Pure.
 *
 * - `ok`: a 2xx.
 * - `throttled`: 429 or 503, the receiver asking for less; the limit lowers its rate.
 * - `overloaded`: no complete answer within the timeout; the limit lowers its concurrency.
 * - `failed`: any other retryable failure (5xx, 408, refused, reset, DNS).
 * - `other`: answers that say nothing about load (3xx, other 4xx, TLS or SSRF refusals).
 *
 * The breaker counts 503, `overloaded` and `failed` as failures, never 429 (a receiver that
 * throttles is up) nor `other`.
 */
import type { Outcome } from './outcome.js';

export type AnswerSignal = 'ok' | 'throttled' | 'overloaded' | 'failed' | 'other';

export function answerSignal(outcome: Outcome): AnswerSignal {
  if (outcome.kind === 'success') return 'ok';
  if (outcome.kind === 'permanent') return 'other';
  if (outcome.status === 429 || outcome.status === 503) return 'throttled';
  if (outcome.status === undefined && outcome.error.startsWith('timeout')) return 'overloaded';
  return 'failed';
}

/** Whether the breaker counts the answer as a failure of the receiver. */
export function breakerFailure(signal: AnswerSignal, status: number | undefined): boolean {
  if (signal === 'failed' || signal === 'overloaded') return true;
  return signal === 'throttled' && status === 503;
}
