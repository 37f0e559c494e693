import type { LimitRange, LimitRangeItem, Quantity } from '@skiff/api';

/**
 * A LimitRange item with the API's defaults applied, as kube-apiserver stores it: for a Container item, a
 * missing default limit is the max, a missing default request the default limit, else the min.
 */
export function effectiveItem(item: LimitRangeItem): LimitRangeItem {
  if (item.type !== 'Container') return item;
  const fill = (target: Record<string, Quantity>, from: Record<string, Quantity> | undefined) => {
    for (const [name, value] of Object.entries(from ?? {})) if (target[name] === undefined) target[name] = value;
  };
  const limits: Record<string, Quantity> = { ...(item.default ?? {}) };
  fill(limits, item.max);
  const requests: Record<string, Quantity> = { ...(item.defaultRequest ?? {}) };
  fill(requests, limits);
  fill(requests, item.min);
  return { ...{}, ...item, default: limits, defaultRequest: requests };
}

/** Every item of the namespace's LimitRanges of one type, defaults applied, in the ranges' name order. */
export function itemsOfType(ranges: LimitRange[], type: string): LimitRangeItem[] {
  return [...ranges]
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))
    .flatMap((range) => range.spec?.limits ?? [])
    .filter((item) => item.type === type)
    .map(effectiveItem);
}
