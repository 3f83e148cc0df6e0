/**
 * Where keys live when the hot queues are split into shards (EVENTRELAY_SHARDS, docs/deployment.md
 * "Redis Cluster"). The home prefix (EVENTRELAY_PREFIX) keeps the config and every cold key; each
 * shard has a prefix of its own whose hash tag puts all of the shard's keys in one Redis Cluster
 * slot, so BullMQ's multi-key scripts and our MULTIs stay within one node while shards spread over
 * the nodes. A source's intake work (route queue, call batches, rate and dedupe keys, profile
 * queue) goes to the shard of its id, a destination's delivery work (deliver queue, attempt log,
 * dead letters, retry backlog, replay progress) to the shard of its id.
 * With one shard, shard 0 is the home prefix itself: the keys are those of a single Redis.
 */
import { hashBytes } from './hash32.js';

const SLOTS = 16384;

/** CRC16-CCITT (XMODEM), the checksum Redis Cluster maps keys to slots with. */
function crc16(text: string): number {
  let crc = 0;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/**
 * Ids go on shards by a well-mixed hash of their UTF-8 bytes (hash32.ts). Not crc16: it is linear,
 * and ids that differ in a counter (src-1, src-2, …) fell unevenly on shards by it (38% of 480
 * such ids on one of three primaries, where 33% was due).
 */
function spread(id: string): number {
  return hashBytes(Buffer.from(id, 'utf8'));
}

/** The hash tag of a key as Redis Cluster reads it: the text inside the first non-empty {…}, else undefined. */
function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open === -1) return undefined;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/** The Redis Cluster slot of a key (CLUSTER KEYSLOT). */
export function keySlot(key: string): number {
  return crc16(hashTag(key) ?? key) % SLOTS;
}

/**
 * The tag of shard `index` of `count`: the first `<tag>.<index>.<k>` whose slot lies in the
 * index-th count-th of the slot range. With the even, contiguous slot layout `redis-cli --cluster
 * create` and managed clusters make, and `count` a multiple of the number of primaries, every
 * primary then holds the same number of shards. Deterministic: every process derives the same.
 */
function shardTag(tag: string, index: number, count: number): string {
  for (let k = 0; ; k++) {
    const candidate = `${tag}.${index}.${k}`;
    if (Math.floor((keySlot(`{${candidate}}`) * count) / SLOTS) === index) return candidate;
  }
}

export interface Keyspace {
  /** EVENTRELAY_PREFIX: the config and every key that is not per shard. */
  readonly home: string;
  /** EVENTRELAY_SHARDS. */
  readonly shards: number;
  /** Every shard's prefix, by index. */
  readonly prefixes: readonly string[];
  /** The shard a source's calls are written to, routed from and profiled on. */
  routeShardOf(sourceId: string): number;
  /** The shard a destination's deliveries, attempt log and dead letters live on. */
  deliverShardOf(destinationId: string): number;
  /** Shorthands: the prefix of routeShardOf / deliverShardOf. */
  sourcePrefix(sourceId: string): string;
  destinationPrefix(destinationId: string): string;
}

export function keyspace(home: string, shards = 1): Keyspace {
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError(`shards must be a whole number of at least 1, got ${shards}`);
  const tag = hashTag(home);
  const prefixes =
    shards === 1
      ? [home]
      : Array.from({ length: shards }, (_, i) =>
          tag === undefined ? `{${shardTag(home, i, shards)}}` : home.replace(`{${tag}}`, `{${shardTag(tag, i, shards)}}`),
        );
  const shardOf = shards === 1 ? () => 0 : (id: string) => spread(id) % shards;
  return Object.freeze({
    home,
    shards,
    prefixes: Object.freeze(prefixes),
    routeShardOf: shardOf,
    deliverShardOf: shardOf,
    sourcePrefix: (id: string) => prefixes[shardOf(id)] as string,
    destinationPrefix: (id: string) => prefixes[shardOf(id)] as string,
  });
}

/**
 * A store's `where`: the keyspace given, or the one shard of a bare prefix (a single Redis, and the
 * tests that predate shards).
 */
export function asKeyspace(where: string | Keyspace): Keyspace {
  return typeof where === 'string' ? keyspace(where) : where;
}

/**
 * Parses a list of shard indexes ("0,2,5-7"), or "all", against `count` shards; the message of a
 * bad list says what is wrong.
 */
export function parseShardList(raw: string, count: number): readonly number[] | string {
  const text = raw.trim();
  if (text === 'all') return Array.from({ length: count }, (_, i) => i);
  const chosen = new Set<number>();
  for (const item of text.split(',').map((s) => s.trim())) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(item);
    if (!match) return `must be "all" or shard numbers and ranges such as 0,2,4-7, got "${item}"`;
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    if (to < from) return `has the range "${item}" that ends before it starts`;
    if (to >= count) return `names shard ${to}, but EVENTRELAY_SHARDS is ${count} (shards 0 to ${count - 1})`;
    for (let i = from; i <= to; i++) chosen.add(i);
  }
  return [...chosen].sort((a, b) => a - b);
}

/** The shards this process's workers take jobs from (EVENTRELAY_CONSUME_SHARDS, checked at load). */
export function consumedShards(env: { readonly EVENTRELAY_SHARDS: number; readonly EVENTRELAY_CONSUME_SHARDS: string }): readonly number[] {
  const chosen = parseShardList(env.EVENTRELAY_CONSUME_SHARDS, env.EVENTRELAY_SHARDS);
  if (typeof chosen === 'string') throw new RangeError(`EVENTRELAY_CONSUME_SHARDS ${chosen}`);
  return chosen;
}
