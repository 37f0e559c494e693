// Int-or-string fields that count pods (a rollout's maxSurge and maxUnavailable), as apimachinery's intstr
// scales them.

/**
 * An int-or-percent value as a count of `total`: a non-negative integer (or a string of digits) as it is,
 * `"<n>%"` as that share of `total`, rounded up or down. Undefined for anything else, for the caller to
 * refuse or replace in its own words.
 */
export function scaledIntOrPercent(value: number | string, total: number, roundUp: boolean): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const percent = /^(\d+)%$/.exec(value);
  if (percent) {
    const exact = (Number(percent[1]) * total) / 100;
    return roundUp ? Math.ceil(exact) : Math.floor(exact);
  }
  return /^\d+$/.test(value) ? Number(value) : undefined;
}
