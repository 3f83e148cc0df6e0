/**
 * Checks on the decoded body text before JSON.parse: nesting depth is bounded so that no later
 * step (serialization onto the queue, the webhook body) can exhaust the stack.
 */
import { ValidationError } from '@eventrelay/config';
import { MAX_JSON_DEPTH } from './limits.js';

export function parseJsonObject(text: string, shape: JsonTextShape = inspectJsonText(text)): Record<string, unknown> {
  if (shape.depth > MAX_JSON_DEPTH)
    throw new ValidationError('invalid_request', `body nests ${shape.depth} levels deep; at most ${MAX_JSON_DEPTH} are allowed`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ValidationError('invalid_request', `body is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ValidationError('invalid_request', 'body must be a JSON object');
  return value as Record<string, unknown>;
}

export interface JsonTextShape {
  /** Deepest [ / { nesting outside strings; counting stops once past the limit. */
  readonly depth: number;
  /** A number written with an exponent (1e20) appears outside strings. */
  readonly exponentNumbers: boolean;
}

/** One pass over the text outside strings, which it jumps over with the native search. */
export function inspectJsonText(text: string): JsonTextShape {
  let depth = 0;
  let max = 0;
  let exponentNumbers = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i = closingQuote(text, i);
      if (i === -1) break;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) {
        max = depth;
        if (max > MAX_JSON_DEPTH) break;
      }
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
    // Outside strings an e after a digit can only be an exponent (true and false have none).
    else if ((c === 101 /* e */ || c === 69) /* E */ && isDigit(text.charCodeAt(i - 1))) exponentNumbers = true;
  }
  return { depth: max, exponentNumbers };
}

const isDigit = (c: number) => c >= 48 && c <= 57;

/** Index of the quote that ends the string opened at `open`, or -1 when it is never closed. */
function closingQuote(text: string, open: number): number {
  let j = open;
  for (;;) {
    j = text.indexOf('"', j + 1);
    if (j === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(j - 1 - backslashes) === 92 /* \ */) backslashes++;
    if (backslashes % 2 === 0) return j;
  }
}

/**
 * Whether a batch item may be stored larger than the limit. Re-serializing never grows JSON except
 * through numbers written with an exponent (1e20 is stored as 100000000000000000000), and an item
 * with the envelope merged in is made of parts of the body; so a body within the per-call limit
 * and without such numbers cannot hold an item over it, and measuring every item can be skipped.
 */
export function itemsNeedMeasuring(shape: JsonTextShape, bodyBytes: number, limit: number): boolean {
  return bodyBytes > limit || shape.exponentNumbers;
}
