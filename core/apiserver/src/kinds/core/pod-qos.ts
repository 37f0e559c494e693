import { parseQuantity, type Container, type Pod, type ResourceList } from '@skiff/api';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** Only CPU and memory decide a pod's quality of service. */
const QOS_RESOURCES = ['cpu', 'memory'];

function nonZero(list: ResourceList | undefined): Map<string, number> {
  const values = new Map<string, number>();
  for (const name of QOS_RESOURCES) {
    const quantity = list?.[name];
    if (quantity !== undefined && parseQuantity(quantity) !== 0) values.set(name, parseQuantity(quantity));
  }
  return values;
}

function addTo(total: Map<string, number>, values: Map<string, number>): void {
  for (const [name, value] of values) total.set(name, (total.get(name) ?? 0) + value);
}

/**
 * The pod's QoS class, computed the way Kubernetes does: BestEffort without any CPU or memory request or
 * limit; Guaranteed when every container limits both and requests equal limits; else Burstable.
 */
export function podQOSClass(pod: Pod): QOSClass {
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let guaranteed = true;
  const containers: Container[] = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  for (const container of containers) {
    addTo(requests, nonZero(container.resources?.requests));
    const containerLimits = nonZero(container.resources?.limits);
    addTo(limits, containerLimits);
    if (containerLimits.size !== QOS_RESOURCES.length) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed && requests.size === limits.size && [...requests].every(([name, value]) => limits.get(name) === value)) return 'Guaranteed';
  return 'Burstable';
}
