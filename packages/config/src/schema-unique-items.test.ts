/**
 * Every array that must hold unique items says what type its items are, beside any $ref. The
 * validator checks uniqueness with a hash only when it sees the item type in the array's own
 * schema; behind a $ref it compares every pair, and a 1 MB body of 40,000 ids then held the admin
 * process for over five seconds (the hostile-bodies test).
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const SCHEMAS = path.join(__dirname, '..', 'schemas');

function uniqueArraysWithoutItemType(node: unknown, at: string, found: string[]): string[] {
  if (Array.isArray(node)) node.forEach((child, i) => uniqueArraysWithoutItemType(child, `${at}/${i}`, found));
  else if (node !== null && typeof node === 'object') {
    const schema = node as Record<string, unknown>;
    const items = schema['items'] as Record<string, unknown> | undefined;
    if (schema['uniqueItems'] === true && (items === undefined || typeof items['type'] !== 'string')) found.push(at);
    for (const [key, child] of Object.entries(schema)) uniqueArraysWithoutItemType(child, `${at}/${key}`, found);
  }
  return found;
}

it.each(readdirSync(SCHEMAS).filter((f) => f.endsWith('.schema.json')))('%s: every uniqueItems array names its item type', (file) => {
  const schema: unknown = JSON.parse(readFileSync(path.join(SCHEMAS, file), 'utf8'));
  expect(uniqueArraysWithoutItemType(schema, '#', [])).toEqual([]);
});
