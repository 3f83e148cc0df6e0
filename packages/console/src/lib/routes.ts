/**
 * Hash routes (`#/destinations/dst_x/deliveries?status=failed`): the admin service serves one
 * index.html and needs no fallback for deep links.
 */
export type Route =
  | { screen: 'overview' }
  | { screen: 'sources' }
  | { screen: 'source'; id: string }
  | { screen: 'debugger'; id: string }
  | { screen: 'destinations' }
  | { screen: 'new-destination' }
  | { screen: 'destination'; id: string }
  | { screen: 'deliveries'; id: string; query: string }
  | { screen: 'dead-letters'; id: string; query: string }
  | { screen: 'audiences' }
  | { screen: 'regulations' }
  | { screen: 'audit' }
  | { screen: 'not-found'; path: string };

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  const [pathPart = '', query = ''] = raw.split('?', 2);
  const parts = pathPart
    .split('/')
    .filter((p) => p !== '')
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  const [a, b, c] = parts;
  if (parts.length === 0) return { screen: 'overview' };
  if (a === 'sources' && parts.length === 1) return { screen: 'sources' };
  if (a === 'sources' && b && parts.length === 2) return { screen: 'source', id: b };
  if (a === 'sources' && b && c === 'debugger' && parts.length === 3) return { screen: 'debugger', id: b };
  if (a === 'destinations' && parts.length === 1) return { screen: 'destinations' };
  if (a === 'destinations' && b === 'new' && parts.length === 2) return { screen: 'new-destination' };
  if (a === 'destinations' && b && parts.length === 2) return { screen: 'destination', id: b };
  if (a === 'destinations' && b && c === 'deliveries' && parts.length === 3) return { screen: 'deliveries', id: b, query };
  if (a === 'destinations' && b && c === 'dead-letters' && parts.length === 3) return { screen: 'dead-letters', id: b, query };
  if (parts.length === 1 && (a === 'audiences' || a === 'regulations' || a === 'audit')) return { screen: a };
  return { screen: 'not-found', path: pathPart };
}

export function href(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join('/')}`;
}

export function withQuery(base: string, query: string): string {
  return query ? `${base}?${query}` : base;
}

/** Ids of recently created regulations (there is no list endpoint), newest first, at most `max`. */
export function rememberId(ids: readonly string[], id: string, max = 20): string[] {
  return [id, ...ids.filter((x) => x !== id)].slice(0, max);
}

export function parseIds(stored: string | null): string[] {
  try {
    const v: unknown = JSON.parse(stored ?? '[]');
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}
