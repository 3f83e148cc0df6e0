/** Retry-After (RFC 9110 section 10.2.3): delay-seconds or an HTTP-date. */

/** Milliseconds to wait from `now`, or undefined when the header is absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  // Capped at about 31 years so that absurd values stay finite numbers.
  if (/^\d+$/.test(text)) return Math.min(Number(text), 1e9) * 1000;
  // HTTP-dates are GMT: IMF-fixdate and the obsolete RFC 850 form say so, the obsolete asctime
  // form (RFC 9110 section 5.6.7) implies it. Anything else is ignored rather than guessed at.
  const asctime = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/.test(text);
  if (!asctime && !/^[A-Za-z]{3,9}, .+ GMT$/.test(text)) return undefined;
  const at = Date.parse(asctime ? `${text} GMT` : text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
