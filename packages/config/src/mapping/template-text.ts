/**
 * The text of an `@template` directive: literal text with `{{ path }}` placeholders, split once
 * when the mapping is compiled. There is no escape: a template cannot put a literal `{{` in its
 * output (a `@literal` or `@coalesce` of plain strings can). A `}}` outside a placeholder is text.
 */
import { pathProblem, splitPath } from '../filters/call-path.js';

/** Literal text, or the names of a path whose value is put in its place. */
export type TemplatePart = string | { readonly path: readonly string[] };

/** The template's parts, in order, or what is wrong with its placeholders. */
export type ParsedTemplate = { readonly parts: readonly TemplatePart[] } | { readonly problems: readonly string[] };

export function parseTemplateText(text: string): ParsedTemplate {
  const parts: TemplatePart[] = [];
  const problems: string[] = [];
  let from = 0;
  for (;;) {
    const open = text.indexOf('{{', from);
    if (open < 0) {
      if (from < text.length) parts.push(text.slice(from));
      break;
    }
    if (open > from) parts.push(text.slice(from, open));
    const close = text.indexOf('}}', open + 2);
    if (close < 0) {
      problems.push(`has a {{ without a closing }} (at character ${open + 1})`);
      break;
    }
    const path = text.slice(open + 2, close).trim();
    if (path === '') problems.push(`has an empty {{ }} (at character ${open + 1})`);
    else {
      const problem = pathProblem(path);
      if (problem === undefined) parts.push({ path: splitPath(path) });
      else problems.push(`has a bad path in {{ ${path} }}: ${problem}`);
    }
    from = close + 2;
  }
  return problems.length > 0 ? { problems } : { parts };
}

/** A placeholder's text: a string as is, a number or boolean as String() writes it, anything else (null, absent, object, array) empty. */
export function placeholderText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return '';
}
