// The element order of a list after a strategic merge, as Kubernetes defines it (design proposal
// "preserve order in strategic merge patch"): `$setElementOrder` first, then the order of the patch list,
// then the order of the live list.
//
// Items named by the patch order are sorted by it; the other ("server-only") items keep their live order;
// then the server-only items are woven back in, each placed before the first patch item that comes after
// it in the live list. So `[a, b, c]` patched with `[d, b]` becomes `[d, a, b, c]`.

/** Position of each identity's first occurrence. */
function ranks(list: readonly unknown[], identity: (item: unknown) => unknown): Map<unknown, number> {
  const rank = new Map<unknown, number>();
  list.forEach((item, i) => {
    const id = identity(item);
    if (!rank.has(id)) rank.set(id, i);
  });
  return rank;
}

/**
 * Orders `merged` (the merged items, each once) by `patchOrder` and, for items the patch does not name,
 * by their position in `liveOrder`. `identity` gives what makes two items "the same": the value itself
 * for primitives, the merge key's value for objects.
 */
export function orderMergedList(
  merged: readonly unknown[],
  patchOrder: readonly unknown[],
  liveOrder: readonly unknown[],
  identity: (item: unknown) => unknown,
): unknown[] {
  const patchRank = ranks(patchOrder, identity);
  const liveRank = ranks(liveOrder, identity);
  const named: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const item of merged) (patchRank.has(identity(item)) ? named : serverOnly).push(item);
  // Array.prototype.sort is stable, so items with equal ranks keep their merged order.
  named.sort((a, b) => patchRank.get(identity(a))! - patchRank.get(identity(b))!);
  const liveRankOf = (item: unknown) => liveRank.get(identity(item)) ?? Number.MAX_SAFE_INTEGER;
  serverOnly.sort((a, b) => liveRankOf(a) - liveRankOf(b));

  const result: unknown[] = [];
  let s = 0;
  let n = 0;
  while (s < serverOnly.length || n < named.length) {
    if (n >= named.length) result.push(serverOnly[s++]);
    else if (s >= serverOnly.length) result.push(named[n++]);
    else {
      const serverRank = liveRank.get(identity(serverOnly[s]));
      const namedRank = liveRank.get(identity(named[n]));
      const serverFirst = serverRank !== undefined && namedRank !== undefined && serverRank < namedRank;
      result.push(serverFirst ? serverOnly[s++] : named[n++]);
    }
  }
  return result;
}
