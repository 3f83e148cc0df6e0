/**
 * What an attempt's answer says about the receiver's capacity, for the adaptive limit and the
 * circuit breaker (docs/delivery.md, "Receiver-friendly delivery"; the thresholds are in
 * docs/receivers.md). Pure.
 *
 * - `ok`: a 2xx.
 * - `throttled`: 429, the receiver asking for less; a sustained share lowers the rate.
 * - `overloaded`: no complete answer within the timeout; a sustained share lowers the concurrency.
 * - `failed`: any other retryable failure (5xx, 503 included, 408, refused, reset, DNS).
 * - `other`: answers that say nothing about load (3xx, other 4xx, TLS or SSRF refusals).
 *
 * The breaker counts `overloaded` and `failed` as failures, never a 429 (a receiver that throttles
 * is up) nor `other`. A 503 is a failure rather than throttling: an application that is down
 * behind its load balancer answers it to everything, and a rate learned from that would outlast
 * the outage.
 */
import type { Outcome } from './outcome.js';

export type AnswerSignal = 'ok' | 'throttled' | 'overloaded' | 'failed' | 'other';

export function answerSignal(outcome: Outcome): AnswerSignal {
  if (outcome.kind === 'success') return 'ok';
  if (outcome.kind === 'permanent') return 'other';
  if (outcome.status === 429) return 'throttled';
  if (outcome.status === undefined && outcome.error.startsWith('timeout')) return 'overloaded';
  return 'failed';
}

/** Whether the breaker counts the answer as a failure of the receiver. */
export function breakerFailure(signal: AnswerSignal): boolean {
  return signal === 'failed' || signal === 'overloaded';
}
