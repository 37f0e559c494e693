// The CEL environment CRD rules run in: @bufbuild/cel's standard library and string extensions, plus the
// parts of Kubernetes' CEL libraries common CRDs use (list isSorted/sum/min/max/indexOf/lastIndexOf,
// optional oldSelf), RE2 `matches` with compiled patterns cached, and linear-time, cost-charging versions of
// the standard functions whose work grows with their arguments (string replace/split/join/case/size,
// equality, `in`, list concatenation, integer parsing).
import {
  celEnv,
  celList,
  celMethod,
  celFunc,
  CelScalar,
  isCelError,
  isCelUint,
  listType,
  mapType,
  type CelEnv,
  type CelFunc,
  type CelList,
  type CelMap,
  type CelValue,
} from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { compileRegex } from '../regex.js';
import { MAX_REGEX_LENGTH, meter, traversal } from './cost.js';
import { equal, indexIn } from './equality.js';
import { valueList } from './lists.js';
import { APPEND_FUNCTION, INDEX_FUNCTION, meteredEnv, RANGE_FUNCTION, STEP_FUNCTION } from './metered.js';
import { checkIntegerText, join, lowerAscii, replace, split, stringSize, upperAscii } from './strings.js';

/** The lists that are CEL optionals. */
const OPTIONALS = new WeakSet<CelList>();

/** A CEL optional (what oldSelf is for rules with optionalOldSelf): a list of zero or one value, marked. */
export function celOptional(value: CelValue | undefined): CelList {
  const list = celList(value === undefined ? [] : [value as never]);
  OPTIONALS.add(list);
  return list;
}

function asOptional(target: CelList): CelList {
  if (!OPTIONALS.has(target)) throw new Error('no such overload');
  return target;
}

type Ordered = bigint | number | string | boolean;

function orderable(value: CelValue): Ordered {
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  if (isCelUint(value)) return value.value;
  throw new Error('no such overload');
}

function compare(a: CelValue, b: CelValue): number {
  const x = orderable(a);
  const y = orderable(b);
  const numeric = (v: Ordered) => typeof v === 'bigint' || typeof v === 'number';
  if (typeof x !== typeof y && !(numeric(x) && numeric(y))) throw new Error('no such overload');
  return x < y ? -1 : x > y ? 1 : 0;
}

function sum(list: CelList): CelValue {
  let total: bigint | number | undefined;
  for (const v of list) {
    if (typeof v === 'bigint') {
      if (typeof total === 'number') throw new Error('no such overload');
      total = (total ?? 0n) + v;
    } else if (typeof v === 'number') {
      if (typeof total === 'bigint') throw new Error('no such overload');
      total = (total ?? 0) + v;
    } else {
      throw new Error('no such overload');
    }
  }
  return total ?? 0n;
}

function extreme(list: CelList, sign: 1 | -1, name: string): CelValue {
  if (list.size === 0) throw new Error(`${name} called on empty list`);
  let best: CelValue = list.get(0)!;
  for (const v of list) if (compare(v, best) * sign > 0) best = v;
  return best;
}

const DYN_LIST = listType(CelScalar.DYN);
const DYN_MAP = mapType(CelScalar.DYN, CelScalar.DYN);
const { DYN, BOOL, INT, UINT, DOUBLE, STRING } = CelScalar;

/** Standard functions with the same signatures, whose work now grows only linearly and is charged. */
const linearFunctions = [
  celMethod('replace', STRING, [STRING, STRING], STRING, function (old, replacement) {
    return replace(this, old, replacement);
  }),
  celMethod('replace', STRING, [STRING, STRING, INT], STRING, function (old, replacement, n) {
    return replace(this, old, replacement, n);
  }),
  celMethod('split', STRING, [STRING], DYN_LIST, function (separator) {
    return valueList(split(this, separator));
  }),
  celMethod('split', STRING, [STRING, INT], DYN_LIST, function (separator, n) {
    return valueList(split(this, separator, n));
  }),
  celMethod('join', DYN_LIST, [], STRING, function () {
    return join(this);
  }),
  celMethod('join', DYN_LIST, [STRING], STRING, function (separator) {
    return join(this, separator);
  }),
  celMethod('lowerAscii', STRING, [], STRING, function () {
    return lowerAscii(this);
  }),
  celMethod('upperAscii', STRING, [], STRING, function () {
    return upperAscii(this);
  }),
  celFunc('size', [STRING], INT, stringSize),
  celMethod('size', STRING, [], INT, function () {
    return stringSize(this);
  }),
  celFunc('_==_', [DYN, DYN], BOOL, equal),
  celFunc('_!=_', [DYN, DYN], BOOL, (a, b) => !equal(a, b)),
  celFunc('@in', [DYN, DYN_LIST], BOOL, (x, list) => indexIn(list, x) >= 0),
  // A map's keys are found at once by string; any other key is searched for entry by entry.
  ...[INT, UINT, DOUBLE, BOOL].map((type) =>
    celFunc('@in', [type, DYN_MAP], BOOL, (key: CelValue, map: CelMap) => {
      meter().use(traversal(map.size));
      return map.has(key as never);
    }),
  ),
  // Concatenation copies both lists: @bufbuild/cel chains them instead, and every later read of an item
  // walks the chain (map() and filter() build their result this way, one item per step).
  celFunc('_+_', [DYN_LIST, DYN_LIST], DYN_LIST, (a, b) => {
    const items: CelValue[] = new Array<CelValue>(a.size + b.size);
    for (let i = 0; i < a.size; i++) items[i] = a.get(i)!;
    for (let i = 0; i < b.size; i++) items[a.size + i] = b.get(i)!;
    return valueList(items);
  }),
  ...(['int', 'uint'] as const).map((kind) => {
    const standard = celEnv().funcs.find(kind)!;
    return celFunc(kind, [STRING], kind === 'int' ? INT : UINT, (text: string) => {
      checkIntegerText(text, kind);
      const result = standard.call(0, undefined, [text]);
      if (result === undefined || isCelError(result)) throw result ?? new Error('no such overload');
      return result as never;
    });
  }),
];

const kubernetesFunctions = [
  celMethod('isSorted', DYN_LIST, [], BOOL, function () {
    for (let i = 1; i < this.size; i++) if (compare(this.get(i - 1)!, this.get(i)!) > 0) return false;
    return true;
  }),
  celMethod('sum', DYN_LIST, [], DYN, function () {
    return sum(this) as never;
  }),
  celMethod('min', DYN_LIST, [], DYN, function () {
    return extreme(this, -1, 'min') as never;
  }),
  celMethod('max', DYN_LIST, [], DYN, function () {
    return extreme(this, 1, 'max') as never;
  }),
  celMethod('indexOf', DYN_LIST, [DYN], INT, function (x) {
    return BigInt(indexIn(this, x));
  }),
  celMethod('lastIndexOf', DYN_LIST, [DYN], INT, function (x) {
    return BigInt(indexIn(this, x, true));
  }),
  celMethod('hasValue', DYN_LIST, [], BOOL, function () {
    return asOptional(this).size > 0;
  }),
  celMethod('value', DYN_LIST, [], DYN, function () {
    const optional = asOptional(this);
    if (optional.size === 0) throw new Error('optional.none() dereference');
    return optional.get(0) as never;
  }),
  celMethod('orValue', DYN_LIST, [DYN], DYN, function (fallback) {
    const optional = asOptional(this);
    return (optional.size > 0 ? optional.get(0) : fallback) as never;
  }),
];

/** `matches` compiles its pattern (cached), refusing one too long to compile in reasonable time. */
function compileRulePattern(pattern: string) {
  if (pattern.length > MAX_REGEX_LENGTH) throw new Error('error parsing regexp: expression too large');
  return compileRegex(pattern);
}

const libraryEnv = (extra: readonly CelFunc[] = []): CelEnv =>
  celEnv({ funcs: [...strings, ...linearFunctions, ...kubernetesFunctions, ...extra], re2: { compile: compileRulePattern } });

/** The rule library, unmetered: what a rule may call (the checker asks it). */
export const ruleEnv: CelEnv = libraryEnv();

/** The environment every rule and message expression is planned in: the rule library, every call charged. */
export const meteredRuleEnv: CelEnv = meteredEnv(ruleEnv);

/** Names the parser produces for operators and macros, which the planner handles itself. */
const BUILTIN_OPERATORS = new Set(['_&&_', '_||_', '_?_:_', '@not_strictly_false', '__not_strictly_false__', '!_', '-_', '_[_]', '@in', '_in_']);
const INTERNAL_FUNCTIONS = new Set([STEP_FUNCTION, RANGE_FUNCTION, INDEX_FUNCTION, APPEND_FUNCTION]);

const knownIn = (env: CelEnv) => (name: string) => BUILTIN_OPERATORS.has(name) || (!INTERNAL_FUNCTIONS.has(name) && env.funcs.find(name) !== undefined);

/** Whether a rule may call a function or method of this name. */
export const isKnownFunction: (name: string) => boolean = knownIn(ruleEnv);

/** A library expressions are checked against and planned in. */
export interface RuleLibrary {
  /** Every call charged to the meter of the evaluation under way. */
  readonly metered: CelEnv;
  /** Whether an expression may call a function or method of this name. */
  isKnown(name: string): boolean;
}

/** The rule library of CRD validation rules. */
export const RULE_LIBRARY: RuleLibrary = { metered: meteredRuleEnv, isKnown: isKnownFunction };

/**
 * The rule library with `extra` functions (an admission policy's authorizer). An extra function charges one
 * unit a call; one that costs more charges the rest itself (`meter().use(…)`).
 */
export function ruleLibraryWith(extra: readonly CelFunc[]): RuleLibrary {
  const env = libraryEnv(extra);
  return { metered: meteredEnv(env), isKnown: knownIn(env) };
}
