// CEL equality (and the list searches built on it) that charges the meter for the work it does: comparing
// two lists or maps walks them to the bottom, so one `==` inside a loop can cost as much as the whole object.
import { celEnv, isCelError, isCelList, isCelMap, isCelUint, type CelValue } from '@bufbuild/cel';
import { meter, STRING_TRAVERSAL_COST_FACTOR } from './cost.js';

/** Cost of comparing one pair of values (list items, map entries, scalars). */
export const PAIR_COMPARE_COST = 0.1;
/** Charges are gathered and handed to the meter in batches of about this many units. */
const BATCH = 1_000;

/** The standard library's equality, for the values this module does not walk itself (timestamps, durations, types). */
const standardEquals = celEnv().funcs.find('_==_')!;

function standardEqual(a: CelValue, b: CelValue): boolean {
  const result = standardEquals.call(0, undefined, [a, b]);
  return !isCelError(result) && result === true;
}

const isNumeric = (v: unknown): v is bigint | number => typeof v === 'bigint' || typeof v === 'number';

/** Compares values the way CEL does, charging the meter as it goes (throws once the meter is spent). */
export class EqualityWalk {
  private pending = 0;

  private charge(units: number): void {
    this.pending += units;
    if (this.pending >= BATCH) this.flush();
  }

  flush(): void {
    const units = this.pending;
    this.pending = 0;
    if (units > 0) meter().use(units);
  }

  equal(a: CelValue, b: CelValue): boolean {
    this.charge(PAIR_COMPARE_COST);
    if (typeof a === 'string') {
      if (typeof b !== 'string') return false;
      this.charge(Math.min(a.length, b.length) * STRING_TRAVERSAL_COST_FACTOR);
      return a === b;
    }
    if (a === b) return true;
    const x = isCelUint(a) ? a.value : a;
    const y = isCelUint(b) ? b.value : b;
    if (isNumeric(x) || isNumeric(y)) return isNumeric(x) && isNumeric(y) && x == y;
    if (a instanceof Uint8Array) {
      if (!(b instanceof Uint8Array)) return false;
      this.charge(Math.min(a.length, b.length) * STRING_TRAVERSAL_COST_FACTOR);
      return a.length === b.length && a.every((v, i) => v === b[i]);
    }
    if (isCelList(a)) {
      if (!isCelList(b) || a.size !== b.size) return false;
      for (let i = 0; i < a.size; i++) if (!this.equal(a.get(i)!, b.get(i)!)) return false;
      return true;
    }
    if (isCelMap(a)) {
      if (!isCelMap(b) || a.size !== b.size) return false;
      for (const [key, value] of a) {
        const other = b.get(key as never);
        if (other === undefined || !this.equal(value, other)) return false;
      }
      return true;
    }
    return standardEqual(a, b);
  }
}

/** `a == b`, charged. */
export function equal(a: CelValue, b: CelValue): boolean {
  const walk = new EqualityWalk();
  const result = walk.equal(a, b);
  walk.flush();
  return result;
}

/** The first index (or, `fromEnd`, the last) of `list` holding a value equal to `x`, -1 when none; charged. */
export function indexIn(list: Iterable<CelValue> & { readonly size: number; get(i: number): CelValue | undefined }, x: CelValue, fromEnd = false): number {
  const walk = new EqualityWalk();
  try {
    if (fromEnd) {
      for (let i = list.size - 1; i >= 0; i--) if (walk.equal(list.get(i)!, x)) return i;
    } else {
      for (let i = 0; i < list.size; i++) if (walk.equal(list.get(i)!, x)) return i;
    }
    return -1;
  } finally {
    walk.flush();
  }
}
