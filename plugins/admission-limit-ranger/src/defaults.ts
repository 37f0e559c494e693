import { parseCpuMillis, type Container, type LimitRange, type Pod, type Quantity } from '@skiff/api';
import { itemsOfType } from './items.js';
import { LIMIT_RANGER_ANNOTATION } from './names.js';

/**
 * Gives every container (init containers too) the default requests and limits of the namespace's Container
 * limits it does not state, and records what was set in the `kubernetes.io/limit-ranger` annotation:
 * `LimitRanger plugin set: cpu, memory request for container web; cpu limit for container web`.
 * Returns whether anything was set.
 */
export function applyDefaults(pod: Pod, ranges: LimitRange[]): boolean {
  const limits: Record<string, Quantity> = {};
  const requests: Record<string, Quantity> = {};
  for (const item of itemsOfType(ranges, 'Container')) {
    for (const [name, value] of Object.entries(item.default ?? {})) limits[name] ??= value;
    for (const [name, value] of Object.entries(item.defaultRequest ?? {})) requests[name] ??= value;
  }
  if (Object.keys(limits).length === 0 && Object.keys(requests).length === 0) return false;
  const notes: string[] = [];
  // Containers first, then init containers, as upstream words the annotation.
  for (const container of pod.spec?.containers ?? []) notes.push(...fill(container, 'container', limits, requests));
  for (const container of pod.spec?.initContainers ?? []) notes.push(...fill(container, 'init container', limits, requests));
  if (notes.length === 0) return false;
  pod.metadata.annotations = { ...{}, ...(pod.metadata.annotations ?? {}), [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}` };
  return true;
}

function fill(container: Container, label: string, limits: Record<string, Quantity>, requests: Record<string, Quantity>): string[] {
  const resources = (container.resources ??= {});
  const setLimits: string[] = [];
  const setRequests: string[] = [];
  for (const [name, value] of Object.entries(limits)) {
    if (resources.limits?.[name] !== undefined) continue;
    resources.limits = { ...{}, ...(resources.limits ?? {}), [name]: value };
    setLimits.push(name);
  }
  for (const [name, value] of Object.entries(requests)) {
    if (resources.requests?.[name] !== undefined) continue;
    // A container that states a limit and no request asks for its limit (the pod's API defaults), not the range's default.
    const ownLimit = setLimits.includes(name) ? undefined : resources.limits?.[name];
    resources.requests = { ...{}, ...(resources.requests ?? {}), [name]: ownLimit ?? value };
    if (ownLimit === undefined) setRequests.push(name);
  }
  const notes: string[] = [];
  if (setRequests.length > 0) notes.push(`${setRequests.sort().join(', ')} request for ${label} ${container.name}`);
  if (setLimits.length > 0) notes.push(`${setLimits.sort().join(', ')} limit for ${label} ${container.name}`);
  return notes;
}

/** The pod's QoS class (BestEffort, Burstable, Guaranteed), from its containers' cpu and memory. */
export function qosClass(pod: Pod): 'BestEffort' | 'Burstable' | 'Guaranteed' {
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const container of containers) {
    for (const name of ['cpu', 'memory']) {
      const request = container.resources?.requests?.[name];
      const limit = container.resources?.limits?.[name];
      if (request !== undefined || limit !== undefined) any = true;
      if (limit === undefined || (request !== undefined && parseCpuMillis(request) !== parseCpuMillis(limit))) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
