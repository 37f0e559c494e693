// Kubernetes field selectors (`?fieldSelector=spec.nodeName=node-1,status.phase!=Succeeded`).
// Terms are ANDed and may come in any order (kubectl builds them from a Go map). Values escape `\`, `,`
// and `=` with a backslash; field names cannot contain an operator.

import { errors } from './errors.js';

export interface FieldSelectorTerm {
  readonly field: string;
  /** `=` and `==` both parse to `=`. */
  readonly operator: '=' | '!=';
  /** The unescaped value. */
  readonly value: string;
}

export interface FieldSelector {
  /** True when the selector has no terms and so selects every object. */
  readonly empty: boolean;
  /** The terms in the order they were written. */
  readonly terms: readonly FieldSelectorTerm[];
  /**
   * Whether an object meets every term. `get` returns a field's value; a missing field counts as `""`,
   * as in Kubernetes, so `spec.nodeName=` selects unscheduled pods.
   */
  matches(get: (field: string) => string | undefined): boolean;
  /**
   * The value an `=` term pins `field` to, or undefined. The API server uses it to route
   * `metadata.name=x` and `spec.nodeName=x` to a direct lookup or an index instead of a scan.
   */
  fieldValue(field: string): string | undefined;
  /** The canonical string form: terms sorted, values escaped; `""` selects everything. */
  toString(): string;
}

function invalidTerm(selector: string, term: string): never {
  throw errors.badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
}

/** Splits on commas that are not escaped; escapes stay in place for {@link unescapeValue}. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === '\\') i += 1;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

/** Splits `field<op>value` at the first operator; `!=` and `==` are tried before `=` at each position. */
function splitTerm(term: string): { field: string; operator: '=' | '!='; rawValue: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    const c = term[i];
    if (c === '!' && term[i + 1] === '=') return { field: term.slice(0, i), operator: '!=', rawValue: term.slice(i + 2) };
    if (c === '=') {
      const width = term[i + 1] === '=' ? 2 : 1;
      return { field: term.slice(0, i), operator: '=', rawValue: term.slice(i + width) };
    }
  }
  return undefined;
}

function unescapeValue(raw: string): string {
  if (!/[\\,=]/.test(raw)) return raw;
  let value = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\') {
      const escaped = raw[i + 1];
      if (escaped === undefined) throw errors.badRequest('invalid field selector: invalid escape sequence: \\');
      if (escaped !== '\\' && escaped !== ',' && escaped !== '=') {
        throw errors.badRequest(`invalid field selector: invalid escape sequence: \\${escaped}`);
      }
      value += escaped;
      i += 1;
    } else if (c === ',' || c === '=') {
      throw errors.badRequest(`invalid field selector: unescaped character in value: ${c}`);
    } else {
      value += c;
    }
  }
  return value;
}

/** Escapes a value for a field selector string (`a,b` → `a\,b`). */
export function escapeFieldSelectorValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

function termToString({ field, operator, value }: FieldSelectorTerm): string {
  return `${field}${operator}${escapeFieldSelectorValue(value)}`;
}

function termTest({ field, operator, value }: FieldSelectorTerm): (get: (field: string) => string | undefined) => boolean {
  return operator === '=' ? (get) => (get(field) ?? '') === value : (get) => (get(field) ?? '') !== value;
}

/**
 * Parses a field selector string: comma-separated `field=value`, `field==value` or `field!=value` terms.
 * Empty terms are skipped, so `""` selects everything. Bad input throws a 400 BadRequest ApiError.
 * Which fields a resource supports is the API server's business, not the parser's.
 */
export function parseFieldSelector(selector: string): FieldSelector {
  const terms: FieldSelectorTerm[] = [];
  if (selector.length > 0) {
    for (const part of splitTerms(selector)) {
      if (part.trim() === '') continue;
      const split = splitTerm(part);
      const field = split?.field.trim();
      if (!split || !field) invalidTerm(selector, part);
      terms.push(Object.freeze({ field, operator: split.operator, value: unescapeValue(split.rawValue) }));
    }
  }
  const tests = terms.map(termTest);
  const pinned = new Map<string, string>();
  for (const term of terms) if (term.operator === '=' && !pinned.has(term.field)) pinned.set(term.field, term.value);
  const text = terms.map(termToString).sort().join(',');
  return Object.freeze({
    empty: terms.length === 0,
    terms: Object.freeze(terms),
    matches(get: (field: string) => string | undefined): boolean {
      for (const test of tests) if (!test(get)) return false;
      return true;
    },
    fieldValue: (field: string) => pinned.get(field),
    toString: () => text,
  });
}
