/** A record without a prototype, so a field named `constructor` or `__proto__` is data like any other. */
export function emptyDictionary<T>(): Record<string, T> {
  // Object.create is typed `any`: this is the one place its result is named.
  return Object.create(null) as Record<string, T>;
}
