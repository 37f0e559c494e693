/** A copy of `value` without its undefined fields, so they are not written out as empty keys. */
export function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
