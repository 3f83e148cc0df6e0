/**
 * What the event debugger may show of a call: everything but values under keys that look like
 * secrets (passwords, tokens, API and write keys, card numbers), at any depth. Operators debug
 * with it; it must not become a second place where customers' credentials are kept.
 */
// Matched against the key in lower case without - and _ (so apiKey, api_key and API-KEY alike).
const SECRET_WORDS = /password|passwd|secret|token|authori[sz]ation|apikey|writekey|privatekey|creditcard|cardnumber/;
const SECRET_KEYS = new Set(['pass', 'pwd', 'cvc', 'cvv', 'ssn']);

function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[-_]/g, '');
  return SECRET_KEYS.has(k) || SECRET_WORDS.test(k);
}
const MAX_DEPTH = 64;

export const REDACTED = '[redacted]';

export function redactSecrets<T>(value: T): T {
  return redact(value, 0) as T;
}

function redact(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = isSecretKey(key) ? REDACTED : redact(v, depth + 1);
  return out;
}
