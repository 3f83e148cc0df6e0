/**
 * Admin tokens. Each is known by a token id (the first 8 hex digits of its SHA-256) that the audit
 * log records: it tells tokens apart without revealing them. Several tokens may be configured so
 * that one can be replaced without downtime.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export interface AdminToken {
  readonly id: string;
  readonly digest: Buffer;
}

const TOKEN = /^[A-Za-z0-9._~+/=-]{16,256}$/;

/** The tokens of ADMIN_TOKEN, or why the value is unusable (never echoing it). */
export function parseAdminTokens(raw: string | undefined): readonly AdminToken[] | string {
  if (raw === undefined || raw.trim() === '') return 'is required: set it to a long random string (for example `openssl rand -hex 32`)';
  const parts = raw.split(',').map((t) => t.trim());
  const bad = parts.findIndex((t) => !TOKEN.test(t));
  if (bad >= 0) return `token ${bad + 1} must be 16 to 256 characters of letters, digits and . _ ~ + / = -`;
  return parts.map((t) => ({ id: tokenId(t), digest: digest(t) }));
}

export function tokenId(token: string): string {
  return `tok_${digest(token).toString('hex').slice(0, 8)}`;
}

/**
 * The token a request's Authorization header carries, if it is one of ours. The digests are
 * compared in constant time and every token is compared, so timing tells nothing about them.
 */
export function authenticate(authorization: string | undefined, tokens: readonly AdminToken[]): AdminToken | undefined {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
  if (!match?.[1]) return undefined;
  const presented = digest(match[1]);
  let found: AdminToken | undefined;
  for (const token of tokens) if (timingSafeEqual(presented, token.digest) && !found) found = token;
  return found;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
