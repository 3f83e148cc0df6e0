/**
 * docs/errors.md lists every error code for people; errorCodes is the list the code uses. This
 * keeps the two equal: code, HTTP status and retryable flag of every row.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { errorCodes } from './errors.js';

const DOC = path.resolve(__dirname, '../../../docs/errors.md');
const HEADER = /^\|\s*code\s*\|\s*HTTP status\s*\|\s*retryable\s*\|\s*meaning\s*\|$/;
const ROW = /^\|\s*`([a-z_]+)`\s*\|\s*(\d{3}|—)\s*\|\s*(yes|no)\s*\|\s*(\S.*\S)\s*\|$/;

interface DocRow {
  code: string;
  httpStatus: number | undefined;
  retryable: boolean;
  meaning: string;
}

/** Every row of the registry table; a row that does not match the format fails instead of vanishing. */
function parseErrorTable(markdown: string): DocRow[] {
  const lines = markdown.split('\n').map((l) => l.trim());
  const headerAt = lines.findIndex((l) => HEADER.test(l));
  if (headerAt === -1) throw new Error('docs/errors.md has no "| code | HTTP status | retryable | meaning |" table');
  if (!/^\|(\s*-+\s*\|){4}$/.test(lines[headerAt + 1] ?? '')) throw new Error('the table header is not followed by a separator row');
  const rows: DocRow[] = [];
  for (const line of lines.slice(headerAt + 2)) {
    if (!line.startsWith('|')) break;
    const m = ROW.exec(line);
    if (!m) throw new Error(`docs/errors.md: a table row does not match the format: ${line}`);
    const [, code = '', status = '', retryable = '', meaning = ''] = m;
    rows.push({ code, httpStatus: status === '—' ? undefined : Number(status), retryable: retryable === 'yes', meaning });
  }
  return rows;
}

describe('docs/errors.md', () => {
  const rows = parseErrorTable(readFileSync(DOC, 'utf8'));

  it('lists every code once', () => {
    const codes = rows.map((r) => r.code);
    expect(new Set(codes).size).toBe(codes.length);
    expect([...codes].sort()).toEqual(Object.keys(errorCodes).sort());
  });

  it('gives each code the status and retryable flag of the registry', () => {
    const fromDoc = Object.fromEntries(rows.map((r) => [r.code, { httpStatus: r.httpStatus, retryable: r.retryable }]));
    const fromCode = Object.fromEntries(
      Object.entries(errorCodes).map(([code, e]) => [code, { httpStatus: e.httpStatus, retryable: e.retryable }]),
    );
    expect(fromDoc).toStrictEqual(fromCode);
  });

  it('explains every code', () => {
    for (const row of rows) expect(row.meaning.length).toBeGreaterThan(10);
  });
});

describe('parseErrorTable', () => {
  const table = (...rows: string[]) =>
    ['# Errors', '', '| code | HTTP status | retryable | meaning |', '|---|---|---|---|', ...rows, '', 'after'].join('\n');

  it('reads codes, statuses and flags', () => {
    expect(parseErrorTable(table('| `a_b` | 429 | yes | Slow down now. |', '| `c` | — | no | Start-up only. |'))).toEqual([
      { code: 'a_b', httpStatus: 429, retryable: true, meaning: 'Slow down now.' },
      { code: 'c', httpStatus: undefined, retryable: false, meaning: 'Start-up only.' },
    ]);
  });

  it('fails on a malformed row instead of skipping it', () => {
    expect(() => parseErrorTable(table('| `a` | 400 | no | ok row |', '| a | 400 | maybe | bad row |'))).toThrow(
      'does not match the format',
    );
  });

  it('fails when the table is missing', () => {
    expect(() => parseErrorTable('# Errors\n\nnothing here')).toThrow('has no');
  });
});
