import type { KubeObject, PersistentVolumeClaim, Pod, Quantity, Service } from '@skiff/api';
import { milli, type Amounts } from './amounts.js';

/** A stored collection, as quota keys name it: `count/<resource>` for the core group, `count/<resource>.<group>` otherwise. */
export interface Collection {
  group: string;
  resource: string;
}

/** Core kinds whose object count has a name of its own besides `count/…` (quota's original names). */
const LEGACY_COUNTS = new Set(['pods', 'services', 'secrets', 'configmaps', 'persistentvolumeclaims', 'replicationcontrollers', 'resourcequotas']);

/** Resources a pod's requests are counted under both as `requests.<name>` and `<name>`; its limits as `limits.<name>`. */
const STANDARD_COMPUTE = new Set(['cpu', 'memory', 'ephemeral-storage']);

const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';

export function countKey({ group, resource }: Collection): string {
  return group ? `count/${resource}.${group}` : `count/${resource}`;
}

/** The collection a quota key is counted from, for keys that name one (`count/…`); undefined for the others. */
export function collectionOfCountKey(key: string): Collection | undefined {
  if (!key.startsWith('count/')) return undefined;
  const name = key.slice('count/'.length);
  const dot = name.indexOf('.');
  return dot < 0 ? { group: '', resource: name } : { group: name.slice(dot + 1), resource: name.slice(0, dot) };
}

/** The collections whose objects a quota key depends on. */
export function collectionsOfKey(key: string): Collection[] {
  const counted = collectionOfCountKey(key);
  if (counted) return [counted];
  if (key === 'persistentvolumeclaims' || key === 'requests.storage' || key.includes(STORAGE_CLASS_SUFFIX))
    return [{ group: '', resource: 'persistentvolumeclaims' }];
  if (key === 'services' || key.startsWith('services.')) return [{ group: '', resource: 'services' }];
  if (LEGACY_COUNTS.has(key)) return [{ group: '', resource: key }];
  return [{ group: '', resource: 'pods' }];
}

/** What one stored object uses, under every quota key it counts towards. */
export function usageOf(collection: Collection, object: KubeObject, now = Date.now()): Amounts {
  const usage: Amounts = new Map([[countKey(collection), 1000]]);
  if (collection.group !== '') return usage;
  switch (collection.resource) {
    case 'pods':
      addPodUsage(usage, object as Pod, now);
      break;
    case 'services':
      addServiceUsage(usage, object as Service);
      break;
    case 'persistentvolumeclaims':
      addClaimUsage(usage, object as PersistentVolumeClaim);
      break;
    default:
      if (LEGACY_COUNTS.has(collection.resource)) usage.set(collection.resource, 1000);
  }
  return usage;
}

/**
 * Whether a pod's compute resources still count: not once it has finished (Succeeded, Failed), nor once its
 * deletion's grace period is over. Its `count/pods` counts while it is stored at all.
 */
export function podCounts(pod: Pod, now = Date.now()): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const deletion = pod.metadata.deletionTimestamp;
  const grace = pod.metadata.deletionGracePeriodSeconds;
  if (deletion && grace !== undefined && now > Date.parse(deletion) + grace * 1000) return false;
  return true;
}

type ResourceMap = Record<string, Quantity> | undefined;

interface ContainerResources {
  resources?: { requests?: ResourceMap; limits?: ResourceMap };
}

/** requests and limits of a pod as the scheduler sizes it: the larger of its containers' sum and its largest init container, plus overhead. */
export function podResources(pod: Pod): { requests: Amounts; limits: Amounts } {
  const sum = (containers: ContainerResources[] | undefined, part: 'requests' | 'limits'): Amounts => {
    const total: Amounts = new Map();
    for (const container of containers ?? [])
      for (const [name, value] of Object.entries(container.resources?.[part] ?? {})) total.set(name, (total.get(name) ?? 0) + milli(value));
    return total;
  };
  const largest = (containers: ContainerResources[] | undefined, part: 'requests' | 'limits'): Amounts => {
    const max: Amounts = new Map();
    for (const container of containers ?? [])
      for (const [name, value] of Object.entries(container.resources?.[part] ?? {})) max.set(name, Math.max(max.get(name) ?? 0, milli(value)));
    return max;
  };
  const combine = (part: 'requests' | 'limits'): Amounts => {
    const result = sum(pod.spec?.containers as ContainerResources[], part);
    for (const [name, value] of largest(pod.spec?.initContainers as ContainerResources[], part)) result.set(name, Math.max(result.get(name) ?? 0, value));
    for (const [name, value] of Object.entries(pod.spec?.overhead ?? {})) if (result.has(name)) result.set(name, result.get(name)! + milli(value));
    return result;
  };
  return { requests: combine('requests'), limits: combine('limits') };
}

/** The quota keys a set of requests and limits counts under (`requests.cpu`, `cpu`, `limits.cpu`…). */
export function computeKeys(requests: Amounts, limits: Amounts): Amounts {
  const usage: Amounts = new Map();
  for (const [name, value] of requests) {
    if (!STANDARD_COMPUTE.has(name) && !name.includes('/') && !name.startsWith('hugepages-')) continue;
    usage.set(`requests.${name}`, value);
    if (STANDARD_COMPUTE.has(name)) usage.set(name, value);
  }
  for (const [name, value] of limits) if (STANDARD_COMPUTE.has(name) || name.startsWith('hugepages-')) usage.set(`limits.${name}`, value);
  return usage;
}

function addPodUsage(usage: Amounts, pod: Pod, now: number): void {
  if (!podCounts(pod, now)) return;
  usage.set('pods', 1000);
  const { requests, limits } = podResources(pod);
  for (const [key, value] of computeKeys(requests, limits)) usage.set(key, value);
}

function addServiceUsage(usage: Amounts, service: Service): void {
  usage.set('services', 1000);
  const type = service.spec?.type ?? 'ClusterIP';
  const ports = service.spec?.ports?.length ?? 0;
  if (type === 'LoadBalancer') {
    usage.set('services.loadbalancers', 1000);
    if (service.spec?.allocateLoadBalancerNodePorts !== false) usage.set('services.nodeports', ports * 1000);
  } else if (type === 'NodePort') {
    usage.set('services.nodeports', ports * 1000);
  }
  if (!usage.has('services.nodeports')) usage.set('services.nodeports', 0);
  if (!usage.has('services.loadbalancers')) usage.set('services.loadbalancers', 0);
}

function addClaimUsage(usage: Amounts, claim: PersistentVolumeClaim): void {
  usage.set('persistentvolumeclaims', 1000);
  const requested = claim.spec?.resources?.requests?.storage;
  const allocated = claim.status?.allocatedResources?.storage;
  let storage = requested === undefined ? 0 : milli(requested);
  if (allocated !== undefined) storage = Math.max(storage, milli(allocated));
  usage.set('requests.storage', storage);
  const storageClass = claim.spec?.storageClassName;
  if (storageClass) {
    usage.set(`${storageClass}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`, 1000);
    usage.set(`${storageClass}${STORAGE_CLASS_SUFFIX}requests.storage`, storage);
  }
}
