import type { Pod } from '@skiff/api';
import { amountsOf } from './amounts.js';
import { computeKeys } from './usage.js';

/** The quota keys every container must state a value for, when a quota tracks them (a rule kept for compatibility). */
const MUST_SPECIFY = new Set(['requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory', 'cpu', 'memory']);

/**
 * `must specify limits.cpu for: web; requests.memory for: init,web`, or undefined when every container
 * (init containers too) states what the quota's keys need.
 */
export function missingResources(pod: Pod, keys: string[]): string | undefined {
  const required = keys.filter((key) => MUST_SPECIFY.has(key));
  if (required.length === 0) return undefined;
  const missing = new Map<string, Set<string>>();
  for (const container of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    const stated = computeKeys(amountsOf(container.resources?.requests), amountsOf(container.resources?.limits));
    for (const key of required) if (!stated.has(key)) missing.set(key, (missing.get(key) ?? new Set()).add(container.name));
  }
  if (missing.size === 0) return undefined;
  const parts = [...missing.keys()].sort().map((key) => `${key} for: ${[...missing.get(key)!].sort().join(',')}`);
  return `must specify ${parts.join('; ')}`;
}
