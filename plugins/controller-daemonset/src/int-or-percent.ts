import { DaemonSetError } from './errors.js';
import type { IntOrPercent } from './resources.js';

/** An int-or-percent field as a count of `total`; percentages round up, as the DaemonSet controller does for both fields. */
export function scaledCount(value: IntOrPercent | undefined, total: number, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === 'string') {
    const percent = /^(\d+)%$/.exec(value);
    if (percent) return Math.ceil((Number(percent[1]) * total) / 100);
    if (/^\d+$/.test(value)) return Number(value);
  }
  throw new DaemonSetError('SKIFF_ERR_DAEMONSET_INT_OR_PERCENT', { field, value: JSON.stringify(value) });
}
