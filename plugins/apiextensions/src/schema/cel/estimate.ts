// The worst-case cost of a rule, estimated from its expression and the schema of the node it sits on, in
// the units the meter counts at run time (see cost.ts): strings as long as their maxLength allows, lists
// and maps as large as maxItems/maxProperties allow, and — where the schema sets no bound — as long or as
// large as a request of MAX_REQUEST_SIZE_BYTES can make them. A CRD whose rules could cost more than the
// limits is refused when it is written, as upstream does.
import type { parse } from '@bufbuild/cel';
import type { SchemaNode } from '../node.js';
import {
  LIST_CREATE_COST,
  MAP_CREATE_COST,
  MAX_REGEX_LENGTH,
  MAX_REQUEST_SIZE_BYTES,
  MESSAGE_CREATE_COST,
  REGEX_COMPILE_COST_PER_CHARACTER,
  REGEX_STRING_LENGTH_COST_FACTOR,
  STRING_TRAVERSAL_COST_FACTOR,
  traversal,
} from './cost.js';

type Expr = ReturnType<typeof parse>['expr'];
type Comprehension = Extract<Expr['exprKind'], { case: 'comprehensionExpr' }>['value'];
type Call = Extract<Expr['exprKind'], { case: 'callExpr' }>['value'];

/**
 * The `@result + [item]` calls with which map() and filter() grow their result, one item a step: they
 * append in place at run time (metered.ts), so they cost what they append, not what the result holds.
 */
export function appendSteps(c: Comprehension): Call[] {
  const init = c.accuInit?.exprKind;
  if (init?.case !== 'listExpr' || init.value.elements.length > 0) return [];
  const found: Call[] = [];
  const visit = (e: Expr | undefined) => {
    if (e?.exprKind.case !== 'callExpr') return;
    const call = e.exprKind.value;
    const [left, right] = call.args;
    if (call.function === '_+_' && left?.exprKind.case === 'identExpr' && left.exprKind.value.name === c.accuVar && right?.exprKind.case === 'listExpr') {
      found.push(call);
    } else if (call.function === '_?_:_') {
      visit(call.args[1]);
      visit(call.args[2]);
    }
  };
  visit(c.loopStep);
  return found;
}

/** What the estimator knows of a value: its kind and how large it can be. */
export interface Shape {
  readonly kind: 'string' | 'bytes' | 'list' | 'map' | 'object' | 'scalar' | 'dyn' | 'optional';
  /** The largest size: characters of a string, items of a list, entries of a map, fields of an object. */
  readonly size: number;
  /** A literal: its size is exact. */
  readonly exact?: boolean;
  /** A list's items, a map's values, an optional's value. */
  readonly item?: Shape;
  /** The schema of an object, to select its fields. */
  readonly node?: SchemaNode;
  /** The root of a resource: apiVersion, kind and metadata are fields too. */
  readonly resource?: boolean;
  readonly metadata?: boolean;
}

const UNBOUNDED_STRING_LENGTH = MAX_REQUEST_SIZE_BYTES - 2;
/** Anything at all: no larger than a whole request. */
export const DYN: Shape = {
  kind: 'dyn',
  size: MAX_REQUEST_SIZE_BYTES,
  get item() {
    return DYN;
  },
};
const SCALAR: Shape = { kind: 'scalar', size: 1 };
const STRING: Shape = { kind: 'string', size: UNBOUNDED_STRING_LENGTH };
const stringOf = (size: number, exact = false): Shape => ({ kind: 'string', size, exact });

/** Upstream's fixed sizes of date, date-time and duration strings (formats CEL could read as time values). */
const FORMAT_MAX_LENGTH: Record<string, number> = { duration: 32, date: 12, 'date-time': 32 };
const FORMAT_MIN_LENGTH: Record<string, number> = { duration: 3, date: 12, 'date-time': 21 };

const minSizes = new WeakMap<SchemaNode, number>();

/** The fewest bytes a value of this schema takes in JSON (upstream's estimate, optional fields left out). */
export function minJsonSize(node: SchemaNode | undefined): number {
  if (!node) return 1;
  let size = minSizes.get(node);
  if (size === undefined) {
    size = computeMinJsonSize(node);
    minSizes.set(node, size);
  }
  return size;
}

function computeMinJsonSize(node: SchemaNode): number {
  switch (node.type) {
    case 'boolean':
      return 4;
    case 'number':
    case 'integer':
      return 1;
    case 'string':
      return FORMAT_MIN_LENGTH[node.props.format ?? ''] ?? 2;
    case 'array':
      return 2;
    case 'object': {
      let size = 2;
      for (const name of node.props.required ?? []) {
        const property = node.properties?.get(name);
        // A defaulted field is filled in by the server: the request may leave it out.
        if (property && !property.hasDefault) size += name.length + minJsonSize(property) + 4;
      }
      return size;
    }
    default:
      return 1;
  }
}

/** How many values of this schema a request can hold at most, when no maxItems/maxProperties above bounds it. */
export function unboundedCardinality(node: SchemaNode): number {
  return Math.floor(MAX_REQUEST_SIZE_BYTES / (minJsonSize(node) + 1));
}

/** Shapes of schema nodes, computed once per node (and once more as a resource root). */
const shapes = new WeakMap<SchemaNode, Shape>();
const resourceShapes = new WeakMap<SchemaNode, Shape>();

/** A value of a schema node, as large as the schema (or, without bounds, a request) allows. */
export function shapeOf(node: SchemaNode | undefined, resource = false): Shape {
  if (!node) return DYN;
  const memo = resource ? resourceShapes : shapes;
  let shape = memo.get(node);
  if (!shape) {
    shape = computeShape(node, resource);
    memo.set(node, shape);
  }
  return shape;
}

function computeShape(node: SchemaNode, resource: boolean): Shape {
  if (node.intOrString) return { kind: 'dyn', size: UNBOUNDED_STRING_LENGTH };
  const props = node.props;
  switch (node.type) {
    case 'string':
      if (props.maxLength !== undefined) return stringOf(Math.max(0, props.maxLength) * 4);
      return stringOf(FORMAT_MAX_LENGTH[props.format ?? ''] ?? UNBOUNDED_STRING_LENGTH);
    case 'integer':
    case 'number':
    case 'boolean':
      return SCALAR;
    case 'array': {
      const size = props.maxItems ?? Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minJsonSize(node.items) + 1));
      return { kind: 'list', size: Math.max(0, size), item: shapeOf(node.items, node.items?.embedded) };
    }
    case 'object': {
      if (typeof node.additional === 'object') {
        const size = props.maxProperties ?? Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minJsonSize(node.additional) + 6));
        return { kind: 'map', size: Math.max(0, size), item: shapeOf(node.additional, node.additional.embedded) };
      }
      const open = node.additional === true || node.preserveUnknown;
      const fields = (node.properties?.size ?? 0) + (resource || node.embedded ? 3 : 0);
      return { kind: 'object', node, resource: resource || node.embedded, size: open ? MAX_REQUEST_SIZE_BYTES : fields };
    }
    default:
      return DYN;
  }
}

function field(shape: Shape, name: string): Shape {
  if (shape.metadata) return name === 'name' || name === 'generateName' ? STRING : DYN;
  if (shape.kind === 'map') return shape.item ?? DYN;
  if (shape.kind !== 'object' || !shape.node) return DYN;
  const node = shape.node;
  const property = node.properties?.get(name);
  if (property) return shapeOf(property, property.embedded);
  if (typeof node.additional === 'object') return shapeOf(node.additional, node.additional.embedded);
  if (shape.resource && (name === 'apiVersion' || name === 'kind')) return STRING;
  if (shape.resource && name === 'metadata') return { kind: 'object', metadata: true, size: 2 };
  return DYN;
}

/** The smallest shape covering both. */
function union(a: Shape, b: Shape): Shape {
  if (a.kind !== b.kind) return { kind: 'dyn', size: Math.max(a.size, b.size) };
  if (a.kind === 'object' && a.node !== b.node) return DYN;
  const item = a.item && b.item ? union(a.item, b.item) : (a.item ?? b.item);
  return { ...{}, ...a, size: Math.max(a.size, b.size), exact: a.exact && b.exact && a.size === b.size, item };
}

const isText = (s: Shape) => s.kind === 'string' || s.kind === 'bytes';
const isContainer = (s: Shape) => s.kind === 'list' || s.kind === 'map' || s.kind === 'dyn';
const mayBeText = (s: Shape) => isText(s) || s.kind === 'dyn';

/** Memoized per shape: schema shapes are shared, and an object's cost sums its whole subtree. */
function memoized(compute: (s: Shape) => number): (s: Shape) => number {
  const memo = new WeakMap<Shape, number>();
  return (s) => {
    let value = memo.get(s);
    if (value === undefined) {
      value = compute(s);
      memo.set(s, value);
    }
    return value;
  };
}

/** Upstream's cost of comparing a list's item with a value: 1, plus walking it when it is text. */
function elementCompareCost(list: Shape): number {
  const item = list.item ?? DYN;
  return 1 + (isText(item) ? traversal(item.size) : 0);
}

/** Upstream's traversal cost (what the list functions are charged): 0.1 per character, 1 per other scalar. */
const traversalEstimate = memoized((s: Shape): number => {
  switch (s.kind) {
    case 'string':
    case 'bytes':
      return s.size * STRING_TRAVERSAL_COST_FACTOR;
    case 'list':
    case 'optional':
      return s.size * traversalEstimate(s.item ?? DYN);
    case 'map':
      return s.size * (traversal(UNBOUNDED_STRING_LENGTH) + traversalEstimate(s.item ?? DYN));
    case 'object':
      return fieldShapes(s).reduce((total, f) => total + traversal(64) + traversalEstimate(f), 0);
    case 'dyn':
      return s.size;
    default:
      return 1;
  }
});

function fieldShapes(s: Shape): Shape[] {
  if (!s.node || s.size >= MAX_REQUEST_SIZE_BYTES) return [DYN];
  return [...(s.node.properties?.values() ?? [])].map((p) => shapeOf(p, p.embedded));
}

/**
 * Equality as upstream estimates it: walking the shorter side's top level (its characters, items, entries or
 * fields), 1 when either is a scalar. Nested values are compared too at run time and charged there; an
 * estimate that walked them would refuse the common `self == oldSelf` on whole objects that upstream accepts.
 */
function equalityCost(a: Shape, b: Shape): number {
  if (a.kind === 'scalar' || b.kind === 'scalar') return 1;
  return 1 + traversal(Math.min(a.size, b.size));
}

/** Longest text `string()` makes of a value of this shape. */
function printedLength(s: Shape): number {
  switch (s.kind) {
    case 'string':
    case 'bytes':
      return s.size;
    case 'scalar':
      return 32;
    case 'list':
    case 'map':
    case 'optional':
      return 2 + s.size * (printedLength(s.item ?? DYN) + 4);
    default:
      return MAX_REQUEST_SIZE_BYTES * 4;
  }
}

interface Estimate {
  cost: number;
  shape: Shape;
}

const CONSTANT: Estimate = { cost: 0, shape: SCALAR };

/** Cost and result of one call, its arguments already estimated. */
function callEstimate(name: string, target: Shape | undefined, args: Shape[]): Estimate {
  const subject = target ?? args[0] ?? DYN;
  const rest = target ? args : args.slice(1);
  const [a = DYN] = rest;
  const scalar = (cost: number): Estimate => ({ cost, shape: SCALAR });
  switch (name) {
    case '_+_': {
      if (target || args.length !== 2) return scalar(1);
      const [l = DYN, r = DYN] = args;
      if (isText(l) || l.kind === 'list' || l.kind === 'dyn') {
        const size = l.size + r.size;
        const item = l.item && r.item ? union(l.item, r.item) : (l.item ?? r.item);
        return { cost: 1 + traversal(size), shape: { kind: l.kind, size, item } };
      }
      return scalar(1);
    }
    case '_<_':
    case '_<=_':
    case '_>_':
    case '_>=_': {
      const [l = DYN, r = DYN] = args;
      return scalar(mayBeText(l) && mayBeText(r) ? 1 + traversal(Math.min(l.size, r.size)) : 1);
    }
    case '_==_':
    case '_!=_':
      return scalar(equalityCost(args[0] ?? DYN, args[1] ?? DYN));
    case '@in':
    case '_in_': {
      const [x = DYN, container = DYN] = args;
      if (container.kind === 'map') return scalar(1 + (x.kind === 'string' ? 0 : traversal(container.size)));
      return scalar(1 + container.size * elementCompareCost(container));
    }
    case 'size':
      return scalar(1);
    case 'contains':
      return scalar(1 + traversal(subject.size) * Math.max(1, traversal(a.size)));
    case 'startsWith':
    case 'endsWith':
      return scalar(1 + traversal(a.size));
    case 'matches': {
      // A literal pattern is compiled once; one from the object may be new on every call.
      const compile = a.exact ? 0 : Math.min(a.size, MAX_REGEX_LENGTH) * REGEX_COMPILE_COST_PER_CHARACTER;
      return scalar(1 + traversal(subject.size + 1) * Math.ceil(a.size * REGEX_STRING_LENGTH_COST_FACTOR) + compile);
    }
    case 'lowerAscii':
    case 'upperAscii':
    case 'trim':
    case 'substring':
      return { cost: 1 + traversal(subject.size), shape: stringOf(subject.size) };
    case 'charAt':
      return { cost: 1, shape: stringOf(2) };
    case 'replace': {
      const [old = DYN, replacement = DYN] = rest;
      const smallestOld = old.exact ? old.size : 0;
      const size =
        smallestOld === 0
          ? subject.size + (subject.size + 1) * replacement.size
          : Math.max(subject.size, Math.ceil(subject.size / smallestOld) * replacement.size);
      return { cost: 1 + traversal(2 * subject.size) + traversal(size), shape: stringOf(size) };
    }
    case 'split':
      return { cost: 1 + traversal(2 * subject.size), shape: { kind: 'list', size: subject.size + 1, item: stringOf(subject.size) } };
    case 'join': {
      const item = subject.item ?? DYN;
      const size = subject.size * item.size + Math.max(0, subject.size - 1) * (rest.length > 0 ? a.size : 0);
      return { cost: 1 + traversal(2 * size), shape: stringOf(size) };
    }
    case 'indexOf':
    case 'lastIndexOf':
      if (isText(subject)) return scalar(1 + traversal(subject.size));
      return scalar(1 + subject.size * elementCompareCost(subject));
    case 'isSorted':
    case 'sum':
    case 'min':
    case 'max':
      return { cost: 1 + traversalEstimate(subject), shape: name === 'isSorted' ? SCALAR : (subject.item ?? DYN) };
    case 'format':
      return { cost: 1 + traversal(subject.size) + traversalEstimate(a), shape: stringOf(subject.size + printedLength(a)) };
    case 'strings.quote':
      return { cost: 1 + traversal(subject.size), shape: stringOf(2 * subject.size + 2) };
    case 'string':
      return { cost: 1 + (subject.kind === 'bytes' ? traversal(subject.size) : 0), shape: stringOf(isText(subject) ? subject.size : printedLength(subject)) };
    case 'bytes':
      return { cost: 1 + traversal(subject.size), shape: { kind: 'bytes', size: 4 * subject.size } };
    case 'int':
    case 'uint':
    case 'double':
    case 'bool':
    case 'timestamp':
    case 'duration':
      return scalar(1 + (mayBeText(subject) ? traversal(subject.size) : 0));
    case 'dyn':
      return { cost: 1, shape: subject };
    case 'value':
      return { cost: 1, shape: subject.item ?? DYN };
    case 'orValue':
      return { cost: 1, shape: union(subject.item ?? DYN, a) };
    default:
      return scalar(1);
  }
}

/** Estimates expressions in one rule's scope: `self`, `oldSelf`, and the variables comprehensions declare. */
class Estimator {
  /** Calls that append to a comprehension's result in place. */
  private readonly appends = new Set<Call>();

  constructor(private readonly variables: ReadonlyMap<string, Shape>) {}

  estimate(expr: Expr | undefined, scope: ReadonlyMap<string, Shape>): Estimate {
    if (!expr) return { cost: 0, shape: DYN };
    const kind = expr.exprKind;
    switch (kind.case) {
      case 'constExpr': {
        const constant = kind.value.constantKind;
        if (constant.case === 'stringValue') return { cost: 0, shape: stringOf(constant.value.length, true) };
        if (constant.case === 'bytesValue') return { cost: 0, shape: { kind: 'bytes', size: constant.value.length, exact: true } };
        return CONSTANT;
      }
      case 'identExpr':
        return { cost: 1, shape: scope.get(kind.value.name) ?? this.variables.get(kind.value.name) ?? DYN };
      case 'selectExpr': {
        const operand = this.estimate(kind.value.operand, scope);
        return { cost: operand.cost + 1, shape: kind.value.testOnly ? SCALAR : field(operand.shape, kind.value.field) };
      }
      case 'listExpr': {
        const elements = kind.value.elements.map((e) => this.estimate(e, scope));
        const item = elements.map((e) => e.shape).reduce<Shape | undefined>((u, s) => (u ? union(u, s) : s), undefined);
        return { cost: LIST_CREATE_COST + sum(elements), shape: { kind: 'list', size: elements.length, exact: true, item } };
      }
      case 'structExpr': {
        let cost = kind.value.messageName ? MESSAGE_CREATE_COST : MAP_CREATE_COST;
        let item: Shape | undefined;
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey') cost += this.estimate(entry.keyKind.value, scope).cost;
          const value = this.estimate(entry.value, scope);
          cost += value.cost;
          item = item ? union(item, value.shape) : value.shape;
        }
        return { cost, shape: kind.value.messageName ? DYN : { kind: 'map', size: kind.value.entries.length, item } };
      }
      case 'comprehensionExpr':
        return this.comprehension(kind.value, scope);
      case 'callExpr':
        return this.call(kind.value, scope);
      default:
        return { cost: 0, shape: DYN };
    }
  }

  private comprehension(c: Comprehension, scope: ReadonlyMap<string, Shape>): Estimate {
    for (const append of appendSteps(c)) this.appends.add(append);
    const range = this.estimate(c.iterRange, scope);
    const init = this.estimate(c.accuInit, scope);
    const count = range.shape.size;
    const element = range.shape.kind === 'list' || range.shape.kind === 'optional' ? (range.shape.item ?? DYN) : range.shape.kind === 'dyn' ? DYN : STRING;
    const inner = new Map(scope);
    inner.set(c.iterVar, element);
    if (c.iterVar2) inner.set(c.iterVar2, range.shape.item ?? DYN);
    // A list accumulator (map, filter) grows by at most one item a step; what the items are is known once
    // the step has been estimated (the step's cost depends only on the accumulator's size).
    const growing = init.shape.kind === 'list';
    const accumulator = (item: Shape | undefined): Shape => (growing ? { kind: 'list', size: init.shape.size + count, item } : init.shape);
    inner.set(c.accuVar, accumulator(init.shape.item));
    const condition = this.estimate(c.loopCondition, inner);
    const step = this.estimate(c.loopStep, inner);
    if (growing) inner.set(c.accuVar, accumulator(step.shape.item ?? init.shape.item));
    const perStep = condition.cost + step.cost;
    const result = this.estimate(c.result, inner);
    return { cost: range.cost + init.cost + traversal(count) + count * perStep + result.cost, shape: result.shape };
  }

  private call(call: Call, scope: ReadonlyMap<string, Shape>): Estimate {
    const target = call.target ? this.estimate(call.target, scope) : undefined;
    const args = call.args.map((a) => this.estimate(a, scope));
    const argCost = (target?.cost ?? 0) + sum(args);
    const [first, second, third] = args;
    switch (call.function) {
      case '_&&_':
      case '_||_':
        return { cost: argCost, shape: SCALAR };
      case '_?_:_':
        return {
          cost: (first?.cost ?? 0) + Math.max(second?.cost ?? 0, third?.cost ?? 0),
          shape: union(second?.shape ?? DYN, third?.shape ?? DYN),
        };
      case '@not_strictly_false':
      case '__not_strictly_false__':
        return { cost: argCost + 1, shape: SCALAR };
      case '_+_':
        if (this.appends.has(call) && first && second) {
          const item = first.shape.item && second.shape.item ? union(first.shape.item, second.shape.item) : (first.shape.item ?? second.shape.item);
          return { cost: argCost + 1 + traversal(second.shape.size), shape: { ...{}, ...first.shape, item } };
        }
        return this.generic(call, target, args, argCost);
      case '_[_]': {
        const container = first?.shape ?? DYN;
        const key = second?.shape ?? DYN;
        const search = (container.kind === 'map' || container.kind === 'dyn') && key.kind !== 'string' ? traversal(container.size) : 0;
        const keyText = call.args[1]?.exprKind.case === 'constExpr' ? call.args[1].exprKind.value.constantKind.value : undefined;
        const shape =
          container.kind === 'object' && typeof keyText === 'string' ? field(container, keyText) : isContainer(container) ? (container.item ?? DYN) : DYN;
        return { cost: argCost + 1 + search, shape };
      }
      default:
        return this.generic(call, target, args, argCost);
    }
  }

  private generic(call: Call, target: Estimate | undefined, args: readonly Estimate[], argCost: number): Estimate {
    const result = callEstimate(
      call.function,
      target?.shape,
      args.map((a) => a.shape),
    );
    return { cost: argCost + result.cost, shape: result.shape };
  }
}

const sum = (estimates: readonly Estimate[]) => estimates.reduce((total, e) => total + e.cost, 0);

/**
 * The most one evaluation of `expr` can cost on a value of `node` (`isRoot`: the node is a resource's root).
 * `optionalOldSelf`: oldSelf is an optional of the value.
 */
export function estimateCost(expr: Expr, node: SchemaNode, isRoot: boolean, optionalOldSelf: boolean): number {
  const self = shapeOf(node, isRoot);
  const variables = new Map<string, Shape>([
    ['self', self],
    ['oldSelf', optionalOldSelf ? { kind: 'optional', size: 1, item: self } : self],
  ]);
  return Math.ceil(new Estimator(variables).estimate(expr, new Map()).cost);
}
