/**
 * The SSRF guard's address rules (docs/spec.md §4): a webhook may not reach loopback, private,
 * link-local, CGNAT, multicast or cloud metadata addresses unless the operator allowed the network
 * in WEBHOOK_ALLOWED_NETWORKS. Addresses are compared as 128-bit numbers, IPv4 mapped into
 * ::ffff:0:0/96, so an IPv4-mapped IPv6 address cannot pass where its IPv4 form would not.
 */

export interface Network {
  /** As written, for messages. */
  readonly text: string;
  readonly base: bigint;
  readonly prefix: number;
}

const V4_MAPPED = 0xffffn << 32n;

/** Parses an IPv4 or IPv6 address (no zone id) into its 128-bit form; undefined if it is not one. */
export function parseAddress(text: string): bigint | undefined {
  const v4 = parseV4(text);
  if (v4 !== undefined) return V4_MAPPED | v4;
  return parseV6(text);
}

function parseV4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return undefined;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseV6(input: string): bigint | undefined {
  let text = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  if (text.includes('%')) return undefined;
  // A trailing dotted quad (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) stands for the last two groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseV4(tail);
    if (v4 === undefined) return undefined;
    text = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const head = groups(halves[0] ?? '');
  const rest = halves.length === 2 ? groups(halves[1] ?? '') : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  let value = 0n;
  for (const g of [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest]) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    value = (value << 16n) | BigInt(parseInt(g, 16));
  }
  return value;
}

/** Parses `address/prefix` (or a bare address, meaning that one address). */
export function parseNetwork(text: string): Network | undefined {
  const [addr = '', bits, extra] = text.trim().split('/');
  if (extra !== undefined) return undefined;
  const isV4 = parseV4(addr) !== undefined;
  const base = parseAddress(addr);
  if (base === undefined) return undefined;
  const max = isV4 ? 32 : 128;
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return undefined;
  const length = bits === undefined ? max : Number(bits);
  if (length > max) return undefined;
  const prefix = isV4 ? 96 + length : length;
  return { text: text.trim(), base: base & mask(prefix), prefix };
}

function mask(prefix: number): bigint {
  return prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(128 - prefix);
}

export function contains(network: Network, address: bigint): boolean {
  return (address & mask(network.prefix)) === network.base;
}

/** Parses a comma-separated list; returns the networks or the entries that are not networks. */
export function parseNetworkList(text: string): { networks: Network[]; invalid: string[] } {
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const networks: Network[] = [];
  const invalid: string[] = [];
  for (const entry of entries) {
    const network = parseNetwork(entry);
    if (network) networks.push(network);
    else invalid.push(entry);
  }
  return { networks, invalid };
}

const blocked = (text: string, why: string) => ({ network: parseNetwork(text) as Network, why });

/** Where a webhook may not go by default, with the reason given when it is refused. */
export const BLOCKED_NETWORKS: readonly { network: Network; why: string }[] = [
  blocked('0.0.0.0/8', 'unspecified'),
  blocked('10.0.0.0/8', 'private'),
  blocked('100.64.0.0/10', 'carrier-grade NAT'),
  blocked('127.0.0.0/8', 'loopback'),
  blocked('169.254.0.0/16', 'link-local (cloud metadata)'),
  blocked('172.16.0.0/12', 'private'),
  blocked('192.0.0.0/24', 'IETF protocol assignments'),
  blocked('192.168.0.0/16', 'private'),
  blocked('198.18.0.0/15', 'benchmarking'),
  blocked('224.0.0.0/4', 'multicast'),
  blocked('240.0.0.0/4', 'reserved'),
  blocked('::1/128', 'loopback'),
  blocked('::/96', 'unspecified or IPv4-compatible (deprecated)'),
  blocked('fc00::/7', 'unique local (private; includes the fd00:ec2::254 metadata address)'),
  blocked('fe80::/10', 'link-local'),
  blocked('ff00::/8', 'multicast'),
  blocked('100::/64', 'discard-only'),
];

/** Prefixes that embed an IPv4 address in their last 32 bits: the embedded one is checked too. */
const EMBEDS_V4: readonly Network[] = ['64:ff9b::/96', '64:ff9b:1::/48', '2002::/16'].map((t) => parseNetwork(t) as Network);

/**
 * Why `address` may not be connected to, or undefined when it may. Networks the operator allowed
 * win over the default list.
 */
export function refusal(address: string, allowed: readonly Network[]): string | undefined {
  const value = parseAddress(address);
  if (value === undefined) return `"${address}" is not an IP address`;
  if (allowed.some((n) => contains(n, value))) return undefined;
  const candidates = [value];
  // NAT64 and 6to4 addresses reach the IPv4 address inside them.
  for (const n of EMBEDS_V4) {
    if (!contains(n, value)) continue;
    const v4 = n.text.startsWith('2002') ? (value >> 80n) & 0xffffffffn : value & 0xffffffffn;
    candidates.push(V4_MAPPED | v4);
  }
  for (const candidate of candidates) {
    if (candidate !== value && allowed.some((n) => contains(n, candidate))) return undefined;
    const hit = BLOCKED_NETWORKS.find((b) => contains(b.network, candidate));
    if (hit) return `${address} is a ${hit.why} address (${hit.network.text}); allow it with WEBHOOK_ALLOWED_NETWORKS`;
  }
  return undefined;
}
