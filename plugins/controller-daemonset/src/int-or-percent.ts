import { scaledIntOrPercent } from '@skiff/api';
import { DaemonSetError } from './errors.js';

/** An int-or-percent field as a count of `total`; percentages round up, as the DaemonSet controller does for both fields. */
export function scaledCount(value: number | string | undefined, total: number, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  const count = scaledIntOrPercent(value, total, true);
  if (count === undefined) throw new DaemonSetError('SKIFF_ERR_DAEMONSET_INT_OR_PERCENT', { field, value: JSON.stringify(value) });
  return count;
}
