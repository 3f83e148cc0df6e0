/**
 * The length of a parsed JSON value's text as JSON.stringify writes it (no whitespace), counted
 * with an explicit stack so a value nested thousands of levels deep (which JSON.stringify itself
 * cannot write: it overflows the stack) is measured too, and stopping as soon as the count passes
 * `stopAfter` so a huge value costs no more than the limit.
 */
export function jsonTextLength(value: unknown, stopAfter: number): number {
  let length = 0;
  const stack: unknown[] = [value];
  for (;;) {
    if (stack.length === 0) return length;
    const item = stack.pop();
    if (Array.isArray(item)) {
      length += 2 + Math.max(0, item.length - 1);
      for (const child of item as unknown[]) stack.push(child);
    } else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item);
      length += 2 + Math.max(0, entries.length - 1);
      for (const [key, child] of entries) {
        length += JSON.stringify(key).length + 1;
        stack.push(child);
      }
    } else {
      length += (JSON.stringify(item) ?? 'null').length;
    }
    if (length > stopAfter) return length;
  }
}
