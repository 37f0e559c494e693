// CEL lists whose items are known to be CEL values already, so iterating them is a plain array walk.
// @bufbuild/cel iterates a list through a generator that converts every item, and a comprehension copies
// its range that way before each loop (about 100 ns an item: `xs.all(a, xs.exists(b, true))` spent far more
// time copying than its steps cost). The lists rules see — the custom resource's, and those the library
// builds — are made here.
import { celList, type CelList, type CelValue } from '@bufbuild/cel';

const items = new WeakMap<CelList, readonly CelValue[]>();

/** A CEL list of `values` (which must be CEL values: bigint, string, CelList, CelMap, …), iterated natively. */
export function valueList(values: CelValue[]): CelList {
  const list = celList(values as never);
  Object.defineProperty(list, Symbol.iterator, { value: () => values[Symbol.iterator]() });
  items.set(list, values);
  return list;
}

/** The items of a list made by valueList, or undefined for any other list. */
export function itemsOf(list: CelList): readonly CelValue[] | undefined {
  return items.get(list);
}

/** `list` itself when it iterates natively, else a copy that does (copied once, item by item). */
export function natively(list: CelList): CelList {
  return items.has(list) ? list : valueList([...list]);
}
