/**
 * A well-mixed 32-bit hash: FNV-1a, then MurmurHash3's finaliser (FNV alone leaves the low bits
 * poorly mixed for ids that differ only in their last characters: user-1, user-2 …). 32-bit
 * arithmetic only, so every platform and process agrees. Shards hash an id's UTF-8 bytes, sampling
 * a user id's UTF-16 code units (no copy per call); both are fixed, since changing either would
 * move data between shards or users in and out of samples.
 */
// A module constant, not Math.imul in the loops: a global looked up per character is ~100× slower
// where globals are proxied (jest's sandbox), which hid the algorithm's cost in measurements.
const imul = Math.imul;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

export function hashBytes(bytes: Uint8Array): number {
  let h = FNV_OFFSET;
  for (const byte of bytes) h = imul(h ^ byte, FNV_PRIME);
  return finalise(h);
}

export function hashCodeUnits(text: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) h = imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return finalise(h);
}

function finalise(hash: number): number {
  let h = hash;
  h ^= h >>> 16;
  h = imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
