// Compiling x-kubernetes-validations rules: parse, check the rule against the schema of the node it sits on
// (fields that do not exist, functions that do not exist, a result that cannot be a bool), estimate its
// worst-case cost, put the cost meter into it (see instrument()), and plan the program once.
import type { ValidationRule } from '@skiff/api';
import { parse, plan } from '@bufbuild/cel';
import type { RuleProgram, SchemaNode } from '../node.js';
import { LIST_CREATE_COST, MAP_CREATE_COST, MESSAGE_CREATE_COST, meter } from './cost.js';
import { appendSteps, estimateCost } from './estimate.js';
import { isKnownFunction, meteredRuleEnv, RULE_LIBRARY, type RuleLibrary } from './library.js';
import { APPEND_FUNCTION, INDEX_FUNCTION, RANGE_FUNCTION, STEP_FUNCTION } from './metered.js';

type Expr = ReturnType<typeof parse>['expr'];

export const SELF = 'self';
export const OLD_SELF = 'oldSelf';

/** What the checker knows of an expression's type: a schema node, a CEL kind, or nothing (dyn). */
type Kind = 'bool' | 'int' | 'uint' | 'double' | 'string' | 'bytes' | 'null' | 'list' | 'map' | 'type' | 'dyn';
interface Known {
  kind: Kind;
  node?: SchemaNode;
  /** For root and embedded objects: apiVersion, kind and metadata (name, generateName) are fields too. */
  resource?: boolean;
  metadata?: boolean;
  element?: Known;
}

const DYN: Known = { kind: 'dyn' };
const TYPE_NAMES = new Set(['int', 'uint', 'double', 'bool', 'string', 'bytes', 'list', 'map', 'null_type', 'type', 'dyn', 'duration', 'timestamp']);
const BOOL_FUNCTIONS = new Set([
  '_==_',
  '_!=_',
  '_<_',
  '_<=_',
  '_>_',
  '_>=_',
  '_&&_',
  '_||_',
  '!_',
  '@in',
  '_in_',
  '@not_strictly_false',
  'matches',
  'startsWith',
  'endsWith',
  'contains',
  'isSorted',
  'hasValue',
]);
const STRING_FUNCTIONS = new Set(['string', 'lowerAscii', 'upperAscii', 'replace', 'substring', 'trim', 'charAt', 'join', 'format']);
const INT_FUNCTIONS = new Set(['size', 'int', 'indexOf', 'lastIndexOf']);

function known(node: SchemaNode | undefined, resource = false): Known {
  if (!node) return DYN;
  if (node.intOrString) return DYN;
  switch (node.type) {
    case 'integer':
      return { kind: 'int', node };
    case 'number':
      return { kind: 'double', node };
    case 'string':
      return { kind: 'string', node };
    case 'boolean':
      return { kind: 'bool', node };
    case 'array':
      return { kind: 'list', node, element: known(node.items) };
    case 'object':
      return { kind: 'map', node, resource: resource || node.embedded };
    default:
      return DYN;
  }
}

class CheckError extends Error {
  constructor(
    readonly exprId: bigint,
    message: string,
  ) {
    super(message);
  }
}

class RuleChecker {
  usesOldSelf = false;
  constructor(
    private readonly variables: ReadonlyMap<string, Known>,
    private readonly isKnown: (name: string) => boolean = isKnownFunction,
  ) {}

  typeOf(expr: Expr, scope: ReadonlyMap<string, Known>): Known {
    const kind = expr.exprKind;
    switch (kind.case) {
      case 'constExpr':
        return { kind: constKind(kind.value.constantKind.case) };
      case 'identExpr': {
        const name = kind.value.name;
        const local = scope.get(name);
        if (local) return local;
        const variable = this.variables.get(name);
        if (variable) {
          if (name === OLD_SELF) this.usesOldSelf = true;
          return variable;
        }
        if (TYPE_NAMES.has(name)) return { kind: 'type' };
        throw new CheckError(expr.id, `undeclared reference to '${name}' (in container '')`);
      }
      case 'selectExpr': {
        const operand = this.typeOf(kind.value.operand!, scope);
        const field = this.select(operand, kind.value.field, expr.id);
        return kind.value.testOnly ? { kind: 'bool' } : field;
      }
      case 'callExpr': {
        const call = kind.value;
        const target = call.target ? this.typeOf(call.target, scope) : undefined;
        const args = call.args.map((a) => this.typeOf(a, scope));
        if (!this.isKnown(call.function)) throw new CheckError(expr.id, `undeclared reference to '${call.function}' (in container '')`);
        return callResult(call.function, target, args);
      }
      case 'listExpr': {
        const elements = kind.value.elements.map((e) => this.typeOf(e, scope));
        return { kind: 'list', element: elements[0] ?? DYN };
      }
      case 'structExpr':
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey') this.typeOf(entry.keyKind.value, scope);
          if (entry.value) this.typeOf(entry.value, scope);
        }
        return { kind: kind.value.messageName ? 'dyn' : 'map' };
      case 'comprehensionExpr': {
        const c = kind.value;
        const range = this.typeOf(c.iterRange!, scope);
        const inner = new Map(scope);
        const element = range.kind === 'list' ? (range.element ?? DYN) : range.kind === 'map' ? { kind: 'string' as const } : DYN;
        inner.set(c.iterVar, element);
        if (c.iterVar2) inner.set(c.iterVar2, DYN);
        inner.set(c.accuVar, this.typeOf(c.accuInit!, scope));
        this.typeOf(c.loopCondition!, inner);
        const step = this.typeOf(c.loopStep!, inner);
        inner.set(c.accuVar, step.kind === 'dyn' ? inner.get(c.accuVar)! : step);
        return this.typeOf(c.result!, inner);
      }
      default:
        return DYN;
    }
  }

  private select(operand: Known, field: string, id: bigint): Known {
    if (operand.metadata) {
      if (field === 'name' || field === 'generateName') return { kind: 'string' };
      throw new CheckError(id, `undefined field '${field}'`);
    }
    if (operand.kind !== 'map' || !operand.node) return DYN;
    const node = operand.node;
    const property = node.properties?.get(field);
    if (property) return known(property, false);
    if (typeof node.additional === 'object') return known(node.additional);
    if (node.additional === true || node.preserveUnknown) return DYN;
    if (operand.resource) {
      if (field === 'apiVersion' || field === 'kind') return { kind: 'string' };
      if (field === 'metadata') return { kind: 'map', metadata: true };
    }
    throw new CheckError(id, `undefined field '${field}'`);
  }
}

function constKind(constant: string | undefined): Kind {
  switch (constant) {
    case 'boolValue':
      return 'bool';
    case 'int64Value':
      return 'int';
    case 'uint64Value':
      return 'uint';
    case 'doubleValue':
      return 'double';
    case 'stringValue':
      return 'string';
    case 'bytesValue':
      return 'bytes';
    case 'nullValue':
      return 'null';
    default:
      return 'dyn';
  }
}

function callResult(name: string, target: Known | undefined, args: readonly Known[]): Known {
  if (BOOL_FUNCTIONS.has(name)) return { kind: 'bool' };
  if (STRING_FUNCTIONS.has(name)) return { kind: 'string' };
  if (INT_FUNCTIONS.has(name)) return { kind: 'int' };
  switch (name) {
    case 'double':
      return { kind: 'double' };
    case 'bool':
      return { kind: 'bool' };
    case 'split':
      return { kind: 'list', element: { kind: 'string' } };
    case '_?_:_':
      return args[1]?.kind === args[2]?.kind ? args[1]! : DYN;
    case '_+_':
    case '_-_':
    case '_*_':
    case '_/_':
    case '_%_':
      return args[0] && args[0].kind !== 'dyn' && args[0].kind !== 'map' ? { kind: args[0].kind, element: args[0].element } : DYN;
    case '_[_]': {
      const container = args[0];
      if (container?.kind === 'list') return container.element ?? DYN;
      if (container?.kind === 'map' && container.node && typeof container.node.additional === 'object') return known(container.node.additional);
      return DYN;
    }
    default:
      return target?.kind === 'list' && (name === 'min' || name === 'max' || name === 'sum') ? (target.element ?? DYN) : DYN;
  }
}

const EXPR = 'cel.expr.Expr';
const CALL = 'cel.expr.Expr.Call';
const CONSTANT = 'cel.expr.Constant';

const call = (id: bigint, name: string, args: Expr[]): Expr =>
  ({ $typeName: EXPR, id, exprKind: { case: 'callExpr', value: { $typeName: CALL, function: name, args } } }) as unknown as Expr;
const intConstant = (id: bigint, value: number): Expr =>
  ({
    $typeName: EXPR,
    id,
    exprKind: { case: 'constExpr', value: { $typeName: CONSTANT, constantKind: { case: 'int64Value', value: BigInt(value) } } },
  }) as unknown as Expr;

/**
 * Puts the cost meter into an expression and returns the cost of the identifiers, selections and literals
 * it evaluates once per evaluation (function calls charge themselves, see metered.ts). Each comprehension's
 * loop condition becomes `@step(k, <condition>)`, k being what one iteration evaluates of those; its range
 * becomes `@range(<range>)` (the range is copied before the loop); the step of map() and filter() appends
 * with `@append(@result, [item])`; `a[b]` becomes `@index(a, b)`.
 */
function instrument(expr: Expr | undefined, nextId: { value: bigint }): number {
  if (!expr) return 0;
  const kind = expr.exprKind;
  const all = (list: readonly (Expr | undefined)[]) => list.reduce((total, e) => total + instrument(e, nextId), 0);
  switch (kind.case) {
    case 'identExpr':
      return 1;
    case 'selectExpr':
      return 1 + instrument(kind.value.operand, nextId);
    case 'callExpr': {
      const c = kind.value;
      const cost = instrument(c.target, nextId) + all(c.args);
      if (c.function === '_[_]') c.function = INDEX_FUNCTION;
      return c.function === '@not_strictly_false' || c.function === '__not_strictly_false__' ? cost + 1 : cost;
    }
    case 'listExpr':
      return LIST_CREATE_COST + all(kind.value.elements);
    case 'structExpr': {
      let cost = kind.value.messageName ? MESSAGE_CREATE_COST : MAP_CREATE_COST;
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === 'mapKey') cost += instrument(entry.keyKind.value, nextId);
        cost += instrument(entry.value, nextId);
      }
      return cost;
    }
    case 'comprehensionExpr': {
      const c = kind.value;
      for (const append of appendSteps(c)) append.function = APPEND_FUNCTION;
      const once = all([c.iterRange, c.accuInit, c.result]);
      const perStep = all([c.loopCondition, c.loopStep]);
      c.iterRange = call(nextId.value++, RANGE_FUNCTION, [c.iterRange!]);
      c.loopCondition = call(nextId.value++, STEP_FUNCTION, [intConstant(nextId.value++, perStep), c.loopCondition!]);
      return once;
    }
    default:
      return 0;
  }
}

function maxId(expr: Expr | undefined): bigint {
  if (!expr) return 0n;
  let max = expr.id;
  const visit = (e: Expr | undefined) => {
    const m = maxId(e);
    if (m > max) max = m;
  };
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'selectExpr':
      visit(kind.value.operand);
      break;
    case 'callExpr':
      visit(kind.value.target);
      kind.value.args.forEach(visit);
      break;
    case 'listExpr':
      kind.value.elements.forEach(visit);
      break;
    case 'structExpr':
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === 'mapKey') visit(entry.keyKind.value);
        visit(entry.value);
      }
      break;
    case 'comprehensionExpr':
      [kind.value.iterRange, kind.value.accuInit, kind.value.loopCondition, kind.value.loopStep, kind.value.result].forEach(visit);
      break;
  }
  return max;
}

/** cel-go's limit on how deeply an expression may nest; deeper ones would overflow the recursive passes here. */
const MAX_EXPRESSION_DEPTH = 250;

/** The children of an expression node. */
function children(expr: Expr): (Expr | undefined)[] {
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'selectExpr':
      return [kind.value.operand];
    case 'callExpr':
      return [kind.value.target, ...kind.value.args];
    case 'listExpr':
      return kind.value.elements;
    case 'structExpr':
      return kind.value.entries.flatMap((e) => [e.keyKind.case === 'mapKey' ? e.keyKind.value : undefined, e.value]);
    case 'comprehensionExpr':
      return [kind.value.iterRange, kind.value.accuInit, kind.value.loopCondition, kind.value.loopStep, kind.value.result];
    default:
      return [];
  }
}

/** Whether the expression nests deeper than `limit` (measured without recursion). */
function nestsDeeperThan(expr: Expr, limit: number): boolean {
  const pending: [Expr, number][] = [[expr, 1]];
  while (pending.length > 0) {
    const [e, depth] = pending.pop()!;
    if (depth > limit) return true;
    for (const child of children(e)) if (child) pending.push([child, depth + 1]);
  }
  return false;
}

/** `ERROR: <input>:1:6: message` with the source line and a caret under the column, as cel-go words issues. */
function issue(source: string, offset: number, message: string): string {
  const before = source.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1);
  const text = source.split('\n')[line - 1] ?? '';
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${text}\n | ${'.'.repeat(column)}^`;
}

interface Compiled {
  evaluate?: (bindings: Record<string, unknown>) => unknown;
  usesOldSelf: boolean;
  error?: string;
  /** The estimated cost of one evaluation at most. */
  cost?: number;
}

/** Compiles one expression for a node; `expect` is the type its result must be able to have. */
function compileExpression(source: string, node: SchemaNode, isRoot: boolean, optionalOldSelf: boolean, expect: 'bool' | 'string'): Compiled {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { usesOldSelf: false, error: `ERROR: ${message.startsWith('<input>') ? message : `<input>: ${message}`}` };
  }
  if (nestsDeeperThan(parsed.expr, MAX_EXPRESSION_DEPTH)) {
    return { usesOldSelf: false, error: `ERROR: <input>: expression recursion limit exceeded: ${MAX_EXPRESSION_DEPTH}` };
  }
  const self = known(node, isRoot);
  const variables = new Map<string, Known>([
    [SELF, self],
    [OLD_SELF, optionalOldSelf ? DYN : self],
  ]);
  const checker = new RuleChecker(variables);
  try {
    const result = checker.typeOf(parsed.expr, new Map());
    if (result.kind !== 'dyn' && result.kind !== expect) {
      return { usesOldSelf: checker.usesOldSelf, error: expect === 'bool' ? 'cel expression must evaluate to a bool' : 'must evaluate to a string' };
    }
  } catch (err) {
    if (!(err instanceof CheckError)) throw err;
    const positions = parsed.sourceInfo?.positions ?? {};
    const offset = positions[err.exprId.toString()] ?? 0;
    return { usesOldSelf: checker.usesOldSelf, error: issue(source, offset, err.message) };
  }
  const cost = estimateCost(parsed.expr, node, isRoot, optionalOldSelf);
  const startCost = instrument(parsed.expr, { value: maxId(parsed.expr) + 1n });
  try {
    const program = plan(meteredRuleEnv, parsed) as (bindings: Record<string, unknown>) => unknown;
    const evaluate = (bindings: Record<string, unknown>) => {
      meter().charge(startCost);
      return program(bindings);
    };
    return { evaluate, usesOldSelf: checker.usesOldSelf, cost };
  } catch (err) {
    return { usesOldSelf: checker.usesOldSelf, error: `program instantiation failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/**
 * Compiles an expression whose variables have no schema, every one of them `dyn` — admission policies' expressions
 * over `object`, `request`, `params`…: parsed, checked for undeclared names and functions and for a result that
 * can be `expect`, metered and planned in `library` (the rule library unless another is given). Evaluate it
 * inside `withMeter`.
 */
export function compileDynamicExpression(
  source: string,
  variables: readonly string[],
  expect: 'bool' | 'string' | 'any',
  library: RuleLibrary = RULE_LIBRARY,
): { evaluate?: (bindings: Record<string, unknown>) => unknown; error?: string } {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { error: `ERROR: ${message.startsWith('<input>') ? message : `<input>: ${message}`}` };
  }
  if (nestsDeeperThan(parsed.expr, MAX_EXPRESSION_DEPTH)) return { error: `ERROR: <input>: expression recursion limit exceeded: ${MAX_EXPRESSION_DEPTH}` };
  const checker = new RuleChecker(new Map(variables.map((name) => [name, DYN])), library.isKnown);
  try {
    const result = checker.typeOf(parsed.expr, new Map());
    if (expect !== 'any' && result.kind !== 'dyn' && result.kind !== expect) return { error: `must evaluate to ${expect}` };
  } catch (err) {
    if (!(err instanceof CheckError)) throw err;
    const offset = parsed.sourceInfo?.positions?.[err.exprId.toString()] ?? 0;
    return { error: issue(source, offset, err.message) };
  }
  const startCost = instrument(parsed.expr, { value: maxId(parsed.expr) + 1n });
  try {
    const program = plan(library.metered, parsed) as (bindings: Record<string, unknown>) => unknown;
    return {
      evaluate: (bindings) => {
        meter().charge(startCost);
        return program(bindings);
      },
    };
  } catch (err) {
    return { error: `program instantiation failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** Normalises a rule's fieldPath (`.spec.x`, `['a.b']`) to a field path (`spec.x`, `[a.b]`), or undefined if the schema has no such field. */
export function ruleFieldPath(fieldPath: string, node: SchemaNode): string | undefined {
  let rest = fieldPath.trim();
  let path = '';
  let current: SchemaNode | undefined = node;
  while (rest !== '') {
    let name: string;
    let viaKey = false;
    const dotted = /^\.([A-Za-z_][A-Za-z0-9_-]*)/.exec(rest);
    const bracketed = /^\[\s*'((?:[^'\\]|\\.)*)'\s*\]/.exec(rest);
    if (dotted) {
      name = dotted[1]!;
      rest = rest.slice(dotted[0].length);
    } else if (bracketed) {
      name = bracketed[1]!.replace(/\\(.)/g, '$1');
      rest = rest.slice(bracketed[0].length);
      viaKey = true;
    } else {
      return undefined;
    }
    if (!current) return undefined;
    const property: SchemaNode | undefined = current.properties?.get(name);
    if (property) {
      path = path ? `${path}.${name}` : name;
      current = property;
    } else if (typeof current.additional === 'object') {
      path = `${path}[${name}]`;
      current = current.additional;
    } else {
      return viaKey && current.preserveUnknown ? `${path}[${name}]` : undefined;
    }
  }
  return path;
}

/** Compiles a node's x-kubernetes-validations. `isRoot`: the node is a custom resource's root. */
export function compileRules(node: SchemaNode, isRoot: boolean): RuleProgram[] {
  return (node.props['x-kubernetes-validations'] ?? []).map((rule: ValidationRule): RuleProgram => {
    const optional = rule.optionalOldSelf === true;
    const compiled = compileExpression(rule.rule, node, isRoot, optional, 'bool');
    const error = compiled.error ? (compiled.error.startsWith('ERROR') ? `compilation failed: ${compiled.error}` : compiled.error) : undefined;
    let messageError: string | undefined;
    let message: ((bindings: Record<string, unknown>) => unknown) | undefined;
    let messageCost: number | undefined;
    if (rule.messageExpression?.trim()) {
      const m = compileExpression(rule.messageExpression, node, isRoot, optional, 'string');
      if (m.error) messageError = m.error.startsWith('ERROR') ? `messageExpression compilation failed: ${m.error}` : `messageExpression ${m.error}`;
      message = m.evaluate;
      messageCost = m.cost;
    }
    const fieldPath = (rule.fieldPath && ruleFieldPath(rule.fieldPath, node)) || '';
    return { rule, usesOldSelf: compiled.usesOldSelf, error, messageError, fieldPath, evaluate: compiled.evaluate, message, cost: compiled.cost, messageCost };
  });
}
