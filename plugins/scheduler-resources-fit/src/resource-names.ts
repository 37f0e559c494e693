/** A resource in the `kubernetes.io` namespace or without a domain (cpu, memory, hugepages-2Mi…). */
function isNativeResourceName(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

/** An extended resource (`example.com/gpu`): the only kind `ignoredResources` and `ignoredResourceGroups` apply to. */
export function isExtendedResourceName(name: string): boolean {
  return !isNativeResourceName(name) && !name.startsWith('requests.');
}

/**
 * A resource kept among a node's scalar resources (extended, hugepages, `kubernetes.io/` prefixed,
 * attachable volumes): the score leaves it out for a pod that does not request it.
 */
export function isScalarResourceName(name: string): boolean {
  return isExtendedResourceName(name) || name.startsWith('hugepages-') || name.includes('kubernetes.io/') || name.startsWith('attachable-volumes-');
}
