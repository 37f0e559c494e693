// The environment rules are planned in: the rule library with every function call charged to the meter
// before it runs (its cost from its arguments' sizes, as upstream's cost model has it), plus the calls the
// compiler inserts — `@step(k, condition)` for each comprehension's loop condition, `@range(x)` around its
// range, `@append(@result, [item])` for the steps of map() and filter(), `@index(a, b)` for `a[b]`.
// @bufbuild/cel has no cost hook, but every call goes through the environment's function resolver: that is
// where cost is counted.
import { celError, CelScalar, isCelList, isCelMap, isCelUint, type CelEnv, type CelList, type CelType, type CelValue } from '@bufbuild/cel';
import { natively, valueList } from './lists.js';
import { isCompiled } from '../regex.js';
import {
  COST_LIMIT_EXCEEDED,
  MAX_REGEX_LENGTH,
  meter,
  REGEX_COMPILE_COST_PER_CHARACTER,
  REGEX_STRING_LENGTH_COST_FACTOR,
  STRING_TRAVERSAL_COST_FACTOR,
  traversal,
} from './cost.js';

export const STEP_FUNCTION = '@step';
export const RANGE_FUNCTION = '@range';
export const INDEX_FUNCTION = '@index';
export const APPEND_FUNCTION = '@append';

type CelResult = CelValue | Error;
interface Group {
  readonly name: string;
  [Symbol.iterator](): IterableIterator<unknown>;
  call(id: number, target: CelValue | undefined, args: CelValue[]): CelResult | undefined;
}

/** Length of a string or bytes, size of a list or map, 1 for anything else. */
export function sizeOf(value: CelValue | undefined): number {
  if (typeof value === 'string' || value instanceof Uint8Array) return value.length;
  if (isCelList(value) || isCelMap(value)) return value.size;
  return 1;
}

const isText = (value: CelValue | undefined): boolean => typeof value === 'string' || value instanceof Uint8Array;

/**
 * Cost of walking a value to the bottom (upstream's traversal cost): 0.1 per character of its strings,
 * 1 per other scalar. Stops counting once past `cap`.
 */
export function traversalCost(value: CelValue, cap = Number.POSITIVE_INFINITY): number {
  let total = 0;
  const pending: CelValue[] = [value];
  while (pending.length > 0 && total <= cap) {
    const v = pending.pop()!;
    if (isText(v)) total += sizeOf(v) * STRING_TRAVERSAL_COST_FACTOR;
    else if (isCelList(v)) for (const item of v) pending.push(item);
    else if (isCelMap(v)) for (const [key, item] of v) pending.push(key as CelValue, item);
    else total += 1;
  }
  return total;
}

/** Whatever of the meter's budget is left, so a walk that measures a value never runs past it. */
const deepCost = (value: CelValue) => traversalCost(value, meter().budget - meter().spent);

type CallCost = (target: CelValue | undefined, args: CelValue[]) => number;

const textTarget =
  (factor: number): CallCost =>
  (target, args) =>
    1 + traversal(factor * sizeOf(target ?? args[0]));

const compare: CallCost = (_, [a, b]) => (isText(a) && isText(b) ? 1 + traversal(Math.min(sizeOf(a), sizeOf(b))) : 1);
const parsed: CallCost = (_, [a]) => (typeof a === 'string' ? 1 + traversal(a.length) : 1);

/**
 * The cost charged before a call runs. Calls whose work depends on what they find (equality, `in`, list
 * searches, join, replace's result) charge the rest themselves while they work.
 */
const CALL_COSTS: Record<string, CallCost> = {
  '_+_': (_, [a, b]) => (isText(a) || isCelList(a) ? 1 + traversal(sizeOf(a) + sizeOf(b)) : 1),
  '_<_': compare,
  '_<=_': compare,
  '_>_': compare,
  '_>=_': compare,
  contains: (target, [sub]) => 1 + traversal(sizeOf(target)) * Math.max(1, traversal(sizeOf(sub))),
  startsWith: (_, [prefix]) => 1 + traversal(sizeOf(prefix)),
  endsWith: (_, [suffix]) => 1 + traversal(sizeOf(suffix)),
  matches: (target, [pattern]) =>
    1 +
    traversal(sizeOf(target) + 1) * Math.ceil(sizeOf(pattern) * REGEX_STRING_LENGTH_COST_FACTOR) +
    (typeof pattern !== 'string' || isCompiled(pattern) ? 0 : Math.min(pattern.length, MAX_REGEX_LENGTH) * REGEX_COMPILE_COST_PER_CHARACTER),
  lowerAscii: textTarget(1),
  upperAscii: textTarget(1),
  trim: textTarget(1),
  substring: textTarget(1),
  replace: textTarget(2),
  split: textTarget(2),
  indexOf: (target) => (isText(target) ? 1 + traversal(sizeOf(target)) : 1),
  lastIndexOf: (target) => (isText(target) ? 1 + traversal(sizeOf(target)) : 1),
  format: (target, [args]) => 1 + traversal(sizeOf(target)) + deepCost(args!),
  'strings.quote': textTarget(1),
  string: (_, [a]) => (a instanceof Uint8Array ? 1 + traversal(a.length) : 1),
  bytes: parsed,
  int: parsed,
  uint: parsed,
  double: parsed,
  timestamp: parsed,
  duration: parsed,
  isSorted: (target) => 1 + deepCost(target!),
  sum: (target) => 1 + deepCost(target!),
  min: (target) => 1 + deepCost(target!),
  max: (target) => 1 + deepCost(target!),
};

const exceeded = (id: number) => celError(COST_LIMIT_EXCEEDED, id);

interface Overload {
  readonly target: CelType | undefined;
  readonly arguments: readonly CelType[];
  call(id: number, target: CelValue | undefined, args: CelValue[]): CelResult | undefined;
}

/** Whether only values of exactly the overload's types reach it (no `dyn` in its signature). */
const isConcrete = (f: Overload) => f.target !== CelScalar.DYN && !f.arguments.includes(CelScalar.DYN);

function metered(inner: Group): Group {
  const cost = CALL_COSTS[inner.name];
  const overloads = [...(inner as Iterable<Overload>)];
  // The group tries its overloads in turn on every call, but a call site's arguments rarely change types:
  // when no overload takes `dyn`, at most one matches given values, so the last one to match is tried first.
  const remember = overloads.every(isConcrete);
  let last: Overload | undefined;
  return {
    name: inner.name,
    [Symbol.iterator]: () => inner[Symbol.iterator](),
    call(id, target, args) {
      if (!meter().charge(cost ? cost(target, args) : 1)) return exceeded(id);
      if (remember) {
        const fast = last?.call(id, target, args);
        if (fast !== undefined) return fast;
        for (const overload of overloads) {
          const result = overload.call(id, target, args);
          if (result !== undefined) {
            last = overload;
            return result;
          }
        }
      }
      return inner.call(id, target, args);
    },
  };
}

/**
 * `@step(k, condition)`: the loop condition of a comprehension, charging one more iteration, whose
 * identifiers and selections cost `k`; false (ending the loop) once the meter is spent.
 */
const step: Group = {
  name: STEP_FUNCTION,
  [Symbol.iterator]: () => [][Symbol.iterator](),
  call: (_, __, args) => meter().charge(Number(args[0])) && args[1]!,
};

/**
 * What copying one item of a comprehension's range costs: the copy goes through the iteration protocol
 * (tens of nanoseconds an item, a good part of one unit), and a loop that stops at its first item
 * (`xs.all(a, xs.exists(b, true))`) pays for little else. Estimates count 0.1 (they already count every
 * iteration in full, which costs more).
 */
const RANGE_ITEM_COST = 0.5;

/** `@range(x)`: the comprehension copies its range before the first iteration; the copy is charged. */
const range: Group = {
  name: RANGE_FUNCTION,
  [Symbol.iterator]: () => [][Symbol.iterator](),
  call(id, _, [value]) {
    if (!meter().charge(Math.ceil(RANGE_ITEM_COST * sizeOf(value)))) return exceeded(id);
    return isCelList(value) ? natively(value) : value!;
  },
};

/** Index keys the way @bufbuild/cel's attribute access words their absence. */
const notFound = (key: CelValue) =>
  typeof key === 'bigint' || typeof key === 'number' || isCelUint(key)
    ? `index ${Number(isCelUint(key) ? key.value : key)} out of bounds [0, -1)`
    : `field not found: ${String(key)}`;

/**
 * `@index(a, b)`: `a[b]`. A map looks a string key up at once but searches for any other key entry by entry
 * (which is charged); a list is indexed by a whole number.
 */
const index: Group = {
  name: INDEX_FUNCTION,
  [Symbol.iterator]: () => [][Symbol.iterator](),
  call(id, _, [container, key]) {
    if (!meter().charge(1)) return exceeded(id);
    let value: CelValue | undefined;
    if (isCelMap(container)) {
      if (typeof key !== 'string' && !meter().charge(traversal(container.size))) return exceeded(id);
      value = container.get(key as never);
    } else if (isCelList(container) && (typeof key === 'bigint' || typeof key === 'number' || isCelUint(key))) {
      const i = Number(isCelUint(key) ? key.value : key);
      value = Number.isInteger(i) ? container.get(i) : undefined;
    }
    return value === undefined ? celError(notFound(key!), id) : value;
  },
};

/** The arrays behind the results map() and filter() are building, which only `@append` holds. */
const building = new WeakMap<CelList, CelValue[]>();

/**
 * `@append(@result, [item])`: the step of map() and filter(), adding to the result in place (the standard
 * `+` would copy it every step, making map() quadratic). The first step copies the initial (shared) empty
 * list into an array of the comprehension's own; no one else holds that array until the loop is over.
 */
const append: Group = {
  name: APPEND_FUNCTION,
  [Symbol.iterator]: () => [][Symbol.iterator](),
  call(id, _, [result, items]) {
    if (!isCelList(result) || !isCelList(items)) return celError('no such overload', id);
    if (!meter().charge(1 + traversal(items.size))) return exceeded(id);
    let array = building.get(result);
    let list = result;
    if (!array) {
      array = [...result];
      list = valueList(array);
      building.set(list, array);
    }
    for (let i = 0; i < items.size; i++) array.push(items.get(i)!);
    return list;
  },
};

const INTERNAL = new Map<string, Group>([step, range, index, append].map((g) => [g.name, g]));

/** `env` with every function call charged to the meter of the evaluation under way. */
export function meteredEnv(env: CelEnv): CelEnv {
  const groups = new Map<string, Group | undefined>(INTERNAL);
  const funcs = {
    [Symbol.iterator]: () => env.funcs[Symbol.iterator](),
    find(name: string): Group | undefined {
      if (!groups.has(name)) {
        const inner = env.funcs.find(name) as Group | undefined;
        groups.set(name, inner && metered(inner));
      }
      return groups.get(name);
    },
  };
  return { namespace: env.namespace, registry: env.registry, variables: env.variables, funcs } as unknown as CelEnv;
}
