/** The intake paths of docs/spec.md §2: single calls, their browser short forms, and batches. */
import type { NormalizedCall } from '@eventrelay/config';

export type CallType = NormalizedCall['type'];
export type IntakeRoute = { readonly kind: 'single'; readonly type: CallType } | { readonly kind: 'batch' };

export const CALL_TYPES: readonly CallType[] = ['identify', 'track', 'page', 'screen', 'group', 'alias'];

const ROUTES: ReadonlyMap<string, IntakeRoute> = new Map<string, IntakeRoute>([
  ...CALL_TYPES.map((type): [string, IntakeRoute] => [type, { kind: 'single', type }]),
  ...CALL_TYPES.map((type): [string, IntakeRoute] => [type[0] as string, { kind: 'single', type }]),
  ['batch', { kind: 'batch' }],
  ['import', { kind: 'batch' }],
  ['b', { kind: 'batch' }],
]);

/** `segment` is the part after /v1/, without a trailing slash. */
export function routeFor(segment: string): IntakeRoute | undefined {
  return ROUTES.get(segment);
}

export function isCallType(value: unknown): value is CallType {
  return typeof value === 'string' && (CALL_TYPES as readonly string[]).includes(value);
}
