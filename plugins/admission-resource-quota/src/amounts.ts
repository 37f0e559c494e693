import { formatBytes, formatCpuMillis, parseCpuMillis, type Quantity } from '@skiff/api';

/**
 * Amounts of quota resources in thousandths of their unit (millicores, millibytes, milli-objects): integers,
 * so sums and comparisons are exact where floats would drift (0.1 + 0.2 cores).
 */
export type Amounts = Map<string, number>;

export function milli(quantity: Quantity): number {
  return parseCpuMillis(quantity);
}

export function amountsOf(list: Record<string, Quantity> | undefined): Amounts {
  const amounts: Amounts = new Map();
  for (const [key, value] of Object.entries(list ?? {})) {
    try {
      amounts.set(key, milli(value));
    } catch {
      // A malformed stored value counts as unknown: the key is left out and recounted.
    }
  }
  return amounts;
}

export function add(target: Amounts, more: Amounts, sign = 1): void {
  for (const [key, value] of more) target.set(key, (target.get(key) ?? 0) + sign * value);
}

/** The quantity string for an amount, written as `kubectl describe quota` shows it: `500m`, `128Mi`, `3`. */
export function formatAmount(key: string, amount: number): string {
  if (/(^|\.)cpu$/.test(key)) return formatCpuMillis(amount);
  if (amount % 1000 !== 0) return formatCpuMillis(amount);
  const whole = amount / 1000;
  if (/memory|storage|hugepages/.test(key)) return formatBytes(whole);
  return String(whole);
}

export function toList(amounts: Amounts, keys?: Iterable<string>): Record<string, string> {
  const list: Record<string, string> = {};
  for (const key of [...(keys ?? amounts.keys())].sort()) list[key] = formatAmount(key, Math.max(0, amounts.get(key) ?? 0));
  return list;
}

/** `pods=1,requests.cpu=500m`: a resource list as quota messages print it. */
export function prettyPrint(amounts: Amounts, keys: string[]): string {
  return [...keys]
    .sort()
    .map((key) => `${key}=${formatAmount(key, amounts.get(key) ?? 0)}`)
    .join(',');
}
