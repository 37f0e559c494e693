/**
 * Freezes `value` and every object it reaches, so code handed a shared object can only read it: the store's
 * cached objects, what validating admission sees, the API facts. Walks without recursion, since an object
 * may nest deeply; an object already frozen is taken as frozen through.
 */
export function deepFreeze<T>(value: T): T {
  const pending: unknown[] = [value];
  while (pending.length) {
    const current = pending.pop();
    if (!current || typeof current !== 'object' || Object.isFrozen(current)) continue;
    Object.freeze(current);
    // Only objects need a visit; for…in allocates nothing where Object.values makes an array per object.
    if (Array.isArray(current)) {
      for (const child of current) if (child !== null && typeof child === 'object') pending.push(child);
      continue;
    }
    for (const key in current) {
      if (!Object.hasOwn(current, key)) continue;
      const child = (current as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') pending.push(child);
    }
  }
  return value;
}
