/** Retry-After (RFC 9110 section 10.2.3): delay-seconds or an HTTP-date. */

/** Milliseconds to wait from `now`, or undefined when the header is absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // HTTP-dates are always GMT (IMF-fixdate, or the obsolete RFC 850 form); anything else is
  // ignored rather than guessed at in some local zone.
  if (!/^[A-Za-z]{3,9}, .+ GMT$/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
