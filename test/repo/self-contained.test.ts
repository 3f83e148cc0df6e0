/**
 * The repository is self-contained: a clone alone is all a reader or a build gets. The product
 * contract is docs/spec.md and the conventions are CONTRIBUTING.md, so no tracked file may point
 * at a document or folder beside the repository, or at a path of one particular machine.
 *
 * Every tracked text file is read (git ls-files), so a new file is checked without anyone
 * remembering to add it. The patterns are assembled from pieces so that this file does not match
 * them itself.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

interface Rule {
  readonly why: string;
  readonly pattern: RegExp;
}

const dotdot = '\\.\\.';
const OLD_CONTRACT = ['SP', 'EC'].join('');
const OLD_CONVENTIONS = ['CONVEN', 'TIONS'].join('');
const SHARED_FOLDER = ['the', 'shared', 'folder'].join(' ');
const RULES: readonly Rule[] = [
  { why: 'a folder beside the repository', pattern: new RegExp(`${dotdot}/${'shared'}\\b`) },
  { why: 'a path on one machine', pattern: new RegExp(`(^|[^\\w.-])/${'work'}/`) },
  { why: 'the old contract document (use docs/spec.md)', pattern: new RegExp(`\\b${OLD_CONTRACT}\\.md\\b`) },
  { why: 'the old conventions document (use CONTRIBUTING.md)', pattern: new RegExp(`\\b${OLD_CONVENTIONS}\\.md\\b`) },
  // The contract by its old name, with a section or without: it is named by its path, docs/spec.md §n.
  { why: 'the contract by its old name (write docs/spec.md §n)', pattern: new RegExp(`(^|[^\\w/.-])${OLD_CONTRACT}(?![\\w.-])`) },
  { why: 'the folder beside the repository, in words', pattern: new RegExp(`\\b${SHARED_FOLDER}\\b`, 'i') },
];

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly why: string;
  readonly text: string;
}

/** Every line of `text` that breaks a rule, as `file:line`. */
function findOutsideReferences(file: string, text: string, rules: readonly Rule[] = RULES): Finding[] {
  const found: Finding[] = [];
  text.split('\n').forEach((line, i) => {
    for (const rule of rules) {
      if (rule.pattern.test(line)) found.push({ file, line: i + 1, why: rule.why, text: line.trim().slice(0, 160) });
    }
  });
  return found;
}

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  return out.toString('utf8').split('\0').filter(Boolean);
}

function readText(file: string): string | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(ROOT, file));
  } catch {
    return undefined; // listed by git but deleted in the working tree
  }
  // Binary files (images, fonts) hold no references a reader could follow.
  if (bytes.subarray(0, 8000).includes(0)) return undefined;
  return bytes.toString('utf8');
}

describe('the repository is self-contained', () => {
  it('the contract and the conventions are in the repository', () => {
    const files = new Set(trackedFiles());
    expect(files.has('docs/spec.md')).toBe(true);
    expect(files.has('CONTRIBUTING.md')).toBe(true);
  });

  it('no tracked file refers to a document or folder outside the repository', () => {
    const findings = trackedFiles().flatMap((file) => {
      const text = readText(file);
      return text === undefined ? [] : findOutsideReferences(file, text);
    });
    expect(findings.map((f) => `${f.file}:${f.line}: ${f.why}: ${f.text}`)).toEqual([]);
  });

  describe('the rules catch what they are meant to, and nothing else', () => {
    const hits = (line: string) => findOutsideReferences('x.md', line).map((f) => f.why);

    it.each([
      ['a relative link beside the repository', `see [the contract](${'..'}/${'shared'}/${OLD_CONTRACT}.md)`],
      ['a machine path', `cat ${'/work'}/${'shared'}/notes.txt`],
      ['the old contract file name', `as ${OLD_CONTRACT}.md says`],
      ['the old conventions file name', `read ${OLD_CONVENTIONS}.md first`],
      ['a section of the old contract', `(${OLD_CONTRACT} section 4)`],
      ['a § of the old contract', `per ${OLD_CONTRACT} §2`],
      ['the old contract by name', `what the ${OLD_CONTRACT} leaves open`],
      ['that folder in words', `kept in ${SHARED_FOLDER}`],
    ])('flags %s', (_what, line) => {
      expect(hits(line).length).toBeGreaterThan(0);
    });

    it.each([
      ['the contract by its path', 'docs/spec.md §4 lists the body keys'],
      ['the conventions by their path', 'read CONTRIBUTING.md before writing code'],
      ['constant names that contain the letters', 'const POD_SPEC = {}; const NAMESPACE_SPECIAL = 1;'],
      ['a lower-case spec', 'the k8s spec field, a jest spec file'],
      ['a folder called shared inside the repository', `import { x } from "./${'shared'}/thing"`],
      ['a folder called work inside the repository', 'see services/work/queue.ts and ~/homework/'],
    ])('passes %s', (_what, line) => {
      expect(hits(line)).toEqual([]);
    });
  });
});
