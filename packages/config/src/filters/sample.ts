/**
 * Sampling (`{"sample": {"percent": 10}}`): true for a stable share of users. The user's id is
 * hashed into one of 10 000 buckets, and the call passes when its bucket is below percent × 100.
 * The hash has no seed, per process or per rule, so a user is in or out on every call, on every
 * process, after every restart — and samples nest: the users in a 10% sample are in every 20% one.
 */
import { hashCodeUnits } from '../hash32.js';
import type { CallLike } from './call-condition.js';

const SAMPLE_BUCKETS = 10_000;

/** The id sampling hashes: the userId, or the anonymousId of a call without one (non-empty strings). */
export function sampleId(call: CallLike): string | undefined {
  const { userId, anonymousId } = call;
  if (typeof userId === 'string' && userId !== '') return userId;
  if (typeof anonymousId === 'string' && anonymousId !== '') return anonymousId;
  return undefined;
}

/** The id's bucket in [0, 10 000). Changing it moves users in and out of every sample: don't. */
export function sampleBucket(id: string): number {
  return hashCodeUnits(id) % SAMPLE_BUCKETS;
}

/** The sample compiled: 0 never passes, 100 always does (a call with no id too); in between, by bucket. */
export function compileSample(percent: number): (call: CallLike) => boolean {
  if (percent >= 100) return () => true;
  if (percent <= 0) return () => false;
  const below = percent * (SAMPLE_BUCKETS / 100);
  return (call) => {
    const id = sampleId(call);
    return id !== undefined && sampleBucket(id) < below;
  };
}
