/**
 * Where the write key comes from (docs/spec.md §2), first match wins: HTTP Basic with the key as the
 * user name (password ignored, trailing ":" optional), then a `writeKey` field in the body. A Bearer
 * token is not a write key: the key then still comes from the body.
 */
export function extractWriteKey(authorization: string | undefined, body: Record<string, unknown>): string | undefined {
  const fromBasic = basicUser(authorization);
  if (fromBasic) return fromBasic;
  const field = body['writeKey'];
  return typeof field === 'string' && field !== '' ? field : undefined;
}

/** The write key of an HTTP Basic `Authorization` header (its user name), if it holds one. */
export function basicUser(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^\s*basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon === -1 ? decoded : decoded.slice(0, colon);
  return user === '' ? undefined : user;
}
