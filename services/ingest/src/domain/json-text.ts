/**
 * Checks on the decoded body text before JSON.parse: nesting depth is bounded so that no later
 * step (serialization onto the queue, the webhook body) can exhaust the stack.
 */
import { ValidationError } from '@eventrelay/config';
import { MAX_JSON_DEPTH } from './limits.js';

export function parseJsonObject(text: string): Record<string, unknown> {
  const depth = maxNesting(text);
  if (depth > MAX_JSON_DEPTH) throw new ValidationError('invalid_request', `body nests ${depth} levels deep; at most ${MAX_JSON_DEPTH} are allowed`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ValidationError('invalid_request', `body is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ValidationError('invalid_request', 'body must be a JSON object');
  return value as Record<string, unknown>;
}

/** Deepest [ / { nesting outside strings; stops counting once past the limit. */
export function maxNesting(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) {
        max = depth;
        if (max > MAX_JSON_DEPTH) return max;
      }
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return max;
}
