// Kubernetes label selectors: the string form clients send (`?labelSelector=app=web,tier in (a,b)`), the
// object form API objects carry (`spec.selector`), and one compiled matcher for both. Selectors are
// compiled once into small predicates, so matching is a handful of property reads per object.

import { errors } from './errors.js';
import type { LabelSelector } from './types.js';

export type Labels = Readonly<Record<string, string>>;

/** Requirement operators. `=`/`==` parse to `Equals`, `!=` to `NotEquals`, `key` to `Exists`, `!key` to `DoesNotExist`. */
export type LabelOperator = 'Equals' | 'NotEquals' | 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'GreaterThan' | 'LessThan';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** One value for Equals/NotEquals/GreaterThan/LessThan, a sorted set for In/NotIn, none for Exists/DoesNotExist. */
  readonly values: readonly string[];
}

export interface LabelSelectorMatcher {
  /** True when the selector has no requirements and so selects every object. */
  readonly empty: boolean;
  /** The requirements, sorted by key; an object matches when it meets all of them. */
  readonly requirements: readonly LabelRequirement[];
  /**
   * `key → value` for every requirement that pins a label to a single value (`a=b`, `a==b`, `a in (b)`).
   * Informers and indexes use it to narrow candidates by label before calling {@link matches}.
   */
  readonly exactMatches: ReadonlyMap<string, string>;
  matches(labels: Labels | undefined): boolean;
  /** The canonical string form (`app=web,tier in (a,b)`), requirements sorted by key; `""` selects everything. */
  toString(): string;
}

// ---------------------------------------------------------------------------------------------------------
// Label key and value syntax (k8s.io/apimachinery/pkg/util/validation), with Kubernetes' messages.

const NAME_PATTERN = /^(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const NAME_REGEX_TEXT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const DNS_SUBDOMAIN_PATTERN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;
const DNS_SUBDOMAIN_REGEX_TEXT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const VALUE_PATTERN = /^(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const VALUE_REGEX_TEXT = '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?';
const NAME_MAX = 63;
const PREFIX_MAX = 253;
const VALUE_MAX = 63;

const NAME_SYNTAX = `must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc', regex used for validation is '${NAME_REGEX_TEXT}')`;

/** Problems with a label (or annotation) key — an optional DNS-subdomain prefix and `/`, then a name; empty when valid. */
export function labelKeyErrors(key: string): string[] {
  const parts = key.split('/');
  if (parts.length > 2) {
    return [`a qualified name ${NAME_SYNTAX} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  const problems: string[] = [];
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0) problems.push('prefix part must be non-empty');
    else {
      if (prefix.length > PREFIX_MAX) problems.push(`prefix part must be no more than ${PREFIX_MAX} characters`);
      if (!DNS_SUBDOMAIN_PATTERN.test(prefix)) {
        problems.push(
          `prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${DNS_SUBDOMAIN_REGEX_TEXT}')`,
        );
      }
    }
  }
  if (name.length === 0) problems.push('name part must be non-empty');
  else if (name.length > NAME_MAX) problems.push(`name part must be no more than ${NAME_MAX} characters`);
  if (!NAME_PATTERN.test(name)) problems.push(`name part ${NAME_SYNTAX}`);
  return problems;
}

/** Problems with a label value — empty, or up to 63 alphanumerics, `-`, `_`, `.` starting and ending alphanumeric. */
export function labelValueErrors(value: string): string[] {
  const problems: string[] = [];
  if (value.length > VALUE_MAX) problems.push(`must be no more than ${VALUE_MAX} characters`);
  if (!VALUE_PATTERN.test(value)) {
    problems.push(
      `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345', regex used for validation is '${VALUE_REGEX_TEXT}')`,
    );
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------------------
// Building requirements (shared by the string and the object form).

const INTEGER = /^[+-]?\d+$/;

/**
 * Checks a requirement as Kubernetes' NewRequirement does; returns the problem text, or undefined.
 * (Equals/NotEquals/GreaterThan/LessThan always arrive with exactly one value.)
 */
function requirementProblem(key: string, operator: LabelOperator, values: readonly string[]): string | undefined {
  const keyProblems = labelKeyErrors(key);
  if (keyProblems.length > 0) return `key: Invalid value: ${JSON.stringify(key)}: ${keyProblems.join('; ')}`;
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) return "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty";
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length !== 0) return 'values: Invalid value: values set must be empty for exists and does not exist';
      break;
    case 'GreaterThan':
    case 'LessThan':
      if (!INTEGER.test(values[0]!)) return "values: Invalid value: for 'Gt', 'Lt' operators, the value must be an integer";
      break;
  }
  for (let i = 0; i < values.length; i++) {
    const valueProblems = labelValueErrors(values[i]!);
    if (valueProblems.length > 0) {
      return `values[${i}][${key}]: Invalid value: ${JSON.stringify(values[i])}: ${valueProblems.join('; ')}`;
    }
  }
  return undefined;
}

function requirement(key: string, operator: LabelOperator, values: readonly string[], messagePrefix = ''): LabelRequirement {
  const set = operator === 'In' || operator === 'NotIn' ? [...new Set(values)].sort() : values;
  const problem = requirementProblem(key, operator, set);
  if (problem !== undefined) throw errors.badRequest(`${messagePrefix}${problem}`);
  return Object.freeze({ key, operator, values: Object.freeze([...set]) });
}

// ---------------------------------------------------------------------------------------------------------
// Compiling requirements into a matcher.

type Predicate = (labels: Labels) => boolean;

/** Own properties only: `constructor` and `toString` are valid label keys, and must not find Object.prototype. */
function labelValue(labels: Labels, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}

function compileValueSet(values: readonly string[]): (value: string) => boolean {
  if (values.length === 1) {
    const only = values[0]!;
    return (value) => value === only;
  }
  const set = new Set(values);
  return (value) => set.has(value);
}

function compile({ key, operator, values }: LabelRequirement): Predicate {
  switch (operator) {
    case 'Exists':
      return (labels) => Object.hasOwn(labels, key);
    case 'DoesNotExist':
      return (labels) => !Object.hasOwn(labels, key);
    case 'Equals':
    case 'In': {
      const contains = compileValueSet(values);
      return (labels) => {
        const value = labelValue(labels, key);
        return value !== undefined && contains(value);
      };
    }
    case 'NotEquals':
    case 'NotIn': {
      // A missing label is "not equal" to anything: `tier!=db` selects objects without a tier label.
      const contains = compileValueSet(values);
      return (labels) => {
        const value = labelValue(labels, key);
        return value === undefined || !contains(value);
      };
    }
    case 'GreaterThan':
    case 'LessThan': {
      const bound = Number(values[0]);
      const greater = operator === 'GreaterThan';
      return (labels) => {
        const value = labelValue(labels, key);
        if (value === undefined || !INTEGER.test(value)) return false;
        return greater ? Number(value) > bound : Number(value) < bound;
      };
    }
  }
}

function requirementToString({ key, operator, values }: LabelRequirement): string {
  switch (operator) {
    case 'Exists':
      return key;
    case 'DoesNotExist':
      return `!${key}`;
    case 'Equals':
      return `${key}=${values[0]}`;
    case 'NotEquals':
      return `${key}!=${values[0]}`;
    case 'In':
      return `${key} in (${values.join(',')})`;
    case 'NotIn':
      return `${key} notin (${values.join(',')})`;
    case 'GreaterThan':
      return `${key}>${values[0]}`;
    case 'LessThan':
      return `${key}<${values[0]}`;
  }
}

const NO_LABELS: Labels = Object.freeze({});

function matcherOf(unsorted: LabelRequirement[]): LabelSelectorMatcher {
  const requirements = Object.freeze([...unsorted].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
  const predicates = requirements.map(compile);
  const exactMatches = new Map<string, string>();
  for (const r of requirements) {
    const pins = r.operator === 'Equals' || (r.operator === 'In' && r.values.length === 1);
    if (pins && !exactMatches.has(r.key)) exactMatches.set(r.key, r.values[0]!);
  }
  const text = requirements.map(requirementToString).join(',');
  return Object.freeze({
    empty: requirements.length === 0,
    requirements,
    exactMatches,
    matches(labels: Labels | undefined): boolean {
      const subject = labels ?? NO_LABELS;
      for (const predicate of predicates) if (!predicate(subject)) return false;
      return true;
    },
    toString: () => text,
  });
}

/** Selects every object (an empty string selector, or an API selector `{}`). */
export const MATCH_ALL_LABELS: LabelSelectorMatcher = matcherOf([]);

/**
 * Selects no object: what a *missing* selector means on an API object (a ReplicaSet without
 * `spec.selector` owns no pods). Not `empty` — `empty` means "everything". Prints as `""`, as in Kubernetes.
 */
export const MATCH_NO_LABELS: LabelSelectorMatcher = Object.freeze({
  empty: false,
  requirements: Object.freeze([]),
  exactMatches: new Map<string, string>(),
  matches: () => false,
  toString: () => '',
});

// ---------------------------------------------------------------------------------------------------------
// The string form.

type SymbolKind = '!' | '=' | '(' | ')' | ',' | '>' | '<';
type TokenKind = 'identifier' | SymbolKind | '==' | '!=' | 'end';

interface Token {
  kind: TokenKind;
  text: string;
}

const SYMBOLS: ReadonlySet<string> = new Set<SymbolKind>(['!', '=', '(', ')', ',', '>', '<']);

function isSymbol(c: string): c is SymbolKind {
  return SYMBOLS.has(c);
}

const WHITESPACE = /\s/;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (WHITESPACE.test(c)) {
      i += 1;
    } else if (isSymbol(c)) {
      const two = text.slice(i, i + 2);
      if (two === '==' || two === '!=') {
        tokens.push({ kind: two, text: two });
        i += 2;
      } else {
        tokens.push({ kind: c, text: c });
        i += 1;
      }
    } else {
      const start = i;
      while (i < text.length && !SYMBOLS.has(text[i]!) && !WHITESPACE.test(text[i]!)) i += 1;
      tokens.push({ kind: 'identifier', text: text.slice(start, i) });
    }
  }
  tokens.push({ kind: 'end', text: '' });
  return tokens;
}

const REQUIREMENT_ERROR = 'unable to parse requirement: ';

const SYMBOL_OPERATORS: Readonly<Record<'=' | '==' | '!=' | '>' | '<', LabelOperator>> = {
  '=': 'Equals',
  '==': 'Equals',
  '!=': 'NotEquals',
  '>': 'GreaterThan',
  '<': 'LessThan',
};

function unparsableRequirement(message: string): never {
  throw errors.badRequest(`${REQUIREMENT_ERROR}${message}`);
}

class SelectorParser {
  private position = 0;

  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.position]!;
  }

  private next(): Token {
    const token = this.tokens[this.position]!;
    if (token.kind !== 'end') this.position += 1;
    return token;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    if (this.peek().kind === 'end') return requirements;
    for (;;) {
      const start = this.peek();
      if (start.kind !== 'identifier' && start.kind !== '!') {
        throw errors.badRequest(`found '${start.text}', expected: !, identifier, or 'end of string'`);
      }
      requirements.push(this.requirement());
      const after = this.next();
      if (after.kind === 'end') return requirements;
      if (after.kind !== ',') throw errors.badRequest(`found '${after.text}', expected: ',' or 'end of string'`);
      const following = this.peek();
      if (following.kind !== 'identifier' && following.kind !== '!') {
        throw errors.badRequest(`found '${following.text}', expected: identifier after ','`);
      }
    }
  }

  private requirement(): LabelRequirement {
    const negated = this.peek().kind === '!';
    if (negated) this.next();
    const keyToken = this.next();
    if (keyToken.kind !== 'identifier') {
      unparsableRequirement(`found '${keyToken.text}', expected: identifier${negated ? " after '!'" : ''}`);
    }
    const key = keyToken.text;
    const lookahead = this.peek().kind;
    if (negated || lookahead === ',' || lookahead === 'end') {
      return requirement(key, negated ? 'DoesNotExist' : 'Exists', [], REQUIREMENT_ERROR);
    }
    const op = this.next();
    let operator: LabelOperator;
    let values: string[];
    if (op.kind === 'identifier' && (op.text === 'in' || op.text === 'notin')) {
      operator = op.text === 'in' ? 'In' : 'NotIn';
      values = this.valueSet();
    } else if (op.kind === '=' || op.kind === '==' || op.kind === '!=' || op.kind === '>' || op.kind === '<') {
      operator = SYMBOL_OPERATORS[op.kind];
      values = [this.exactValue()];
    } else {
      return unparsableRequirement(`found '${op.text}', expected: in, notin, =, ==, !=, gt, lt`);
    }
    return requirement(key, operator, values, REQUIREMENT_ERROR);
  }

  /** The value after `=`, `==`, `!=`, `>`, `<`; nothing before `,` or the end means the empty value. */
  private exactValue(): string {
    const token = this.peek();
    if (token.kind === ',' || token.kind === 'end') return '';
    this.next();
    if (token.kind !== 'identifier') unparsableRequirement(`found '${token.text}', expected: identifier`);
    return token.text;
  }

  /** `(a,b)`; empty items are empty values, so `()` and `(a,)` hold `""`, as in Kubernetes. */
  private valueSet(): string[] {
    const open = this.next();
    if (open.kind !== '(') unparsableRequirement(`found '${open.text}', expected: '('`);
    const values: string[] = [];
    for (;;) {
      const token = this.next();
      if (token.kind === 'identifier') {
        values.push(token.text);
        const separator = this.next();
        if (separator.kind === ')') return values;
        if (separator.kind !== ',') unparsableRequirement(`found '${separator.text}', expected: ',' or ')'`);
      } else if (token.kind === ',') {
        values.push('');
      } else if (token.kind === ')') {
        values.push('');
        return values;
      } else {
        unparsableRequirement(`found '${token.text}', expected: ',', ')' or identifier`);
      }
    }
  }
}

/**
 * Parses the string form kubectl and clients send: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`,
 * `a` (exists), `!a` (does not exist), `a>1`, `a<1`, joined by commas, whitespace between tokens ignored.
 * The empty string selects everything. Bad input throws a 400 BadRequest ApiError naming the problem.
 */
export function parseLabelSelector(text: string): LabelSelectorMatcher {
  const requirements = new SelectorParser(tokenize(text)).parse();
  return requirements.length === 0 ? MATCH_ALL_LABELS : matcherOf(requirements);
}

const EXPRESSION_OPERATORS: ReadonlyMap<string, LabelOperator> = new Map([
  ['In', 'In'],
  ['NotIn', 'NotIn'],
  ['Exists', 'Exists'],
  ['DoesNotExist', 'DoesNotExist'],
]);

/**
 * Compiles an API object's selector (`matchLabels` and `matchExpressions`, all ANDed).
 * `{}` — no requirements — selects everything; a missing selector (`undefined`/`null`) selects nothing,
 * as for Kubernetes' `LabelSelectorAsSelector`. Invalid selectors throw a 400 BadRequest ApiError.
 */
export function labelSelectorFromObject(selector: LabelSelector | null | undefined): LabelSelectorMatcher {
  if (selector == null) return MATCH_NO_LABELS;
  const requirements: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    requirements.push(requirement(key, 'Equals', [value]));
  }
  for (const expression of selector.matchExpressions ?? []) {
    const operator = EXPRESSION_OPERATORS.get(expression.operator);
    if (operator === undefined) throw errors.badRequest(`${JSON.stringify(expression.operator)} is not a valid label selector operator`);
    requirements.push(requirement(expression.key, operator, expression.values ?? []));
  }
  return requirements.length === 0 ? MATCH_ALL_LABELS : matcherOf(requirements);
}

/** The string form of an object selector — e.g. `app=web` — as served in a Scale's `status.selector`. */
export function labelSelectorToString(selector: LabelSelector): string {
  return labelSelectorFromObject(selector).toString();
}
