import type { Container, Pod } from '@skiff/api';

const COMPUTE = ['cpu', 'memory'] as const;

/**
 * Kubernetes' QoS class: Guaranteed when every container sets equal cpu and memory requests and limits,
 * BestEffort when none sets any, Burstable otherwise.
 */
export function qosClass(pod: Pod): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers: Container[] = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  let any = false;
  let guaranteed = true;
  for (const container of containers) {
    const limits = container.resources?.limits ?? {};
    // Unset requests default to the limits.
    const requests: typeof limits = { ...{}, ...limits, ...container.resources?.requests };
    for (const resource of COMPUTE) {
      const request = requests[resource];
      const limit = limits[resource];
      if (request !== undefined || limit !== undefined) any = true;
      if (limit === undefined || String(request) !== String(limit)) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
