/**
 * Size limits of docs/spec.md §2, in bytes of the inflated body. They protect the queue and the
 * receivers from oversized calls, and match what Segment-style SDKs already split their batches by.
 */
export const MAX_CALL_BYTES = 32 * 1024;
export const MAX_BATCH_BYTES = 500 * 1024;
export const MAX_BATCH_ITEMS = 2500;
export const MAX_MESSAGE_ID_LENGTH = 100;
/**
 * Lengths in characters (UTF-16 code units, as JavaScript counts them). Ids and event names are
 * copied into keys, profiles and every delivery: a bound keeps one call from costing Redis and the
 * receivers kilobytes per id (docs/intake.md, "Limits").
 */
export const MAX_ID_LENGTH = 512;
export const MAX_EVENT_LENGTH = 512;
export const MAX_TRAIT_KEY_LENGTH = 256;
/** Deeper JSON is refused before parsing: re-serializing it later could exhaust the stack. */
export const MAX_JSON_DEPTH = 64;
