import type { KubeObject, PersistentVolumeClaim, Pod, ResourceQuota, ScopedResourceSelectorRequirement } from '@skiff/api';
import type { Collection } from './usage.js';

/** Keys a quota with the BestEffort scope can track. */
const BEST_EFFORT_KEYS = new Set(['pods', 'count/pods']);

/** What a pod-scoped quota (Terminating, NotBestEffort, PriorityClass…) can track: pods and their compute resources. */
function isPodComputeKey(key: string): boolean {
  return (
    key === 'pods' ||
    key === 'count/pods' ||
    key === 'cpu' ||
    key === 'memory' ||
    key === 'ephemeral-storage' ||
    key.startsWith('requests.') ||
    key.startsWith('limits.')
  );
}

/** The scopes of a quota as requirements: its `scopes` (Exists) and its `scopeSelector`'s expressions. */
export function scopeRequirements(quota: ResourceQuota): ScopedResourceSelectorRequirement[] {
  const requirements: ScopedResourceSelectorRequirement[] = (quota.spec?.scopes ?? []).map((scopeName) => ({ scopeName, operator: 'Exists' }));
  requirements.push(...(quota.spec?.scopeSelector?.matchExpressions ?? []));
  return requirements;
}

/** The quota keys of `quota` that an object of `collection` counts towards, or none when its scopes leave it out. */
export function trackedKeys(quota: ResourceQuota, collection: Collection, object: KubeObject): string[] {
  const hard = Object.keys(quota.spec?.hard ?? {});
  const requirements = scopeRequirements(quota);
  if (requirements.length === 0) return hard;
  const isPod = collection.group === '' && collection.resource === 'pods';
  const isClaim = collection.group === '' && collection.resource === 'persistentvolumeclaims';
  for (const requirement of requirements) {
    if (requirement.scopeName === 'VolumeAttributesClass') {
      if (!isClaim || !matchesValue((object as PersistentVolumeClaim).spec?.volumeAttributesClassName, requirement)) return [];
    } else if (!isPod || !podMatches(object as Pod, requirement)) return [];
  }
  if (isClaim) return hard.filter((key) => key === 'persistentvolumeclaims' || key === 'count/persistentvolumeclaims' || key === 'requests.storage');
  if (requirements.some((r) => r.scopeName === 'BestEffort')) return hard.filter((key) => BEST_EFFORT_KEYS.has(key));
  return hard.filter(isPodComputeKey);
}

function podMatches(pod: Pod, requirement: ScopedResourceSelectorRequirement): boolean {
  switch (requirement.scopeName) {
    case 'Terminating':
      return pod.spec?.activeDeadlineSeconds !== undefined && pod.spec.activeDeadlineSeconds >= 0;
    case 'NotTerminating':
      return pod.spec?.activeDeadlineSeconds === undefined || pod.spec.activeDeadlineSeconds < 0;
    case 'BestEffort':
      return isBestEffort(pod);
    case 'NotBestEffort':
      return !isBestEffort(pod);
    case 'PriorityClass':
      return matchesValue(pod.spec?.priorityClassName, requirement);
    case 'CrossNamespacePodAffinity':
      return usesCrossNamespaceAffinity(pod);
    default:
      return false;
  }
}

/** In, NotIn, Exists, DoesNotExist against one string field (empty counts as absent). */
function matchesValue(value: string | undefined, requirement: ScopedResourceSelectorRequirement): boolean {
  const present = value !== undefined && value !== '';
  switch (requirement.operator) {
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
    case 'In':
      return present && (requirement.values ?? []).includes(value);
    case 'NotIn':
      return !present || !(requirement.values ?? []).includes(value);
    default:
      return false;
  }
}

/** A pod none of whose containers asks for or is limited in cpu or memory. */
export function isBestEffort(pod: Pod): boolean {
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  return containers.every((container) => {
    const { requests = {}, limits = {} } = container.resources ?? {};
    return !['cpu', 'memory'].some((name) => requests[name] !== undefined || limits[name] !== undefined);
  });
}

function usesCrossNamespaceAffinity(pod: Pod): boolean {
  const affinity = pod.spec?.affinity;
  const terms = [
    ...(affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
    ...(affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((weighted) => weighted.podAffinityTerm),
    ...(affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
    ...(affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((weighted) => weighted.podAffinityTerm),
  ];
  return terms.some((term) => (term.namespaces?.length ?? 0) > 0 || term.namespaceSelector !== undefined);
}
