// The CEL environment CRD rules run in: @bufbuild/cel's standard library and string extensions, plus the
// parts of Kubernetes' CEL libraries common CRDs use (list isSorted/sum/min/max/indexOf/lastIndexOf,
// optional oldSelf), RE2 `matches` with compiled patterns cached, and the step meter that bounds a rule's work.
import {
  celEnv,
  celList,
  celMethod,
  celFunc,
  CelScalar,
  isCelList,
  isCelMap,
  isCelUint,
  listType,
  type CelEnv,
  type CelList,
  type CelValue,
} from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { compileRegex } from '../regex.js';

/** The function the compiler calls in every comprehension's loop condition (not nameable in a rule). */
export const STEP_FUNCTION = '@step';

/** Counts comprehension steps of one validation against its budget. */
export class StepMeter {
  private used = 0;
  exhausted = false;
  constructor(private readonly budget: number) {}

  /** One more loop step; false (ending the loop) once the budget is spent. */
  step(): boolean {
    if (++this.used > this.budget) this.exhausted = true;
    return !this.exhausted;
  }
}

/** The meter of the evaluation under way (evaluation is synchronous, so one slot is enough). */
let currentMeter: StepMeter | undefined;

/** Runs `fn` with `meter` counting its comprehension steps. */
export function withMeter<T>(meter: StepMeter, fn: () => T): T {
  const previous = currentMeter;
  currentMeter = meter;
  try {
    return fn();
  } finally {
    currentMeter = previous;
  }
}

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

function equal(a: CelValue, b: CelValue): boolean {
  if (a === b) return true;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) return Number(a) === Number(b);
  if (isCelUint(a) && isCelUint(b)) return a.value === b.value;
  if (isCelList(a) && isCelList(b)) {
    if (a.size !== b.size) return false;
    for (let i = 0; i < a.size; i++) if (!equal(a.get(i)!, b.get(i)!)) return false;
    return true;
  }
  if (isCelMap(a) && isCelMap(b)) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !equal(v, b.get(k)!)) return false;
    return true;
  }
  if (a instanceof Uint8Array && b instanceof Uint8Array) return a.length === b.length && a.every((x, i) => x === b[i]);
  return false;
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
const { DYN, BOOL, INT } = CelScalar;

const kubernetesFunctions = [
  celFunc(STEP_FUNCTION, [], BOOL, () => currentMeter?.step() ?? true),
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
    for (let i = 0; i < this.size; i++) if (equal(this.get(i)!, x)) return BigInt(i);
    return -1n;
  }),
  celMethod('lastIndexOf', DYN_LIST, [DYN], INT, function (x) {
    for (let i = this.size - 1; i >= 0; i--) if (equal(this.get(i)!, x)) return BigInt(i);
    return -1n;
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

/** The environment every rule and message expression is planned in. */
export const ruleEnv: CelEnv = celEnv({
  funcs: [...strings, ...kubernetesFunctions],
  re2: { compile: compileRegex },
});

/** Names the parser produces for operators and macros, which the planner handles itself. */
const BUILTIN_OPERATORS = new Set(['_&&_', '_||_', '_?_:_', '@not_strictly_false', '__not_strictly_false__', '!_', '-_', '_[_]', '@in', '_in_']);

/** Whether a rule may call a function or method of this name. */
export function isKnownFunction(name: string): boolean {
  return BUILTIN_OPERATORS.has(name) || (name !== STEP_FUNCTION && ruleEnv.funcs.find(name) !== undefined);
}
