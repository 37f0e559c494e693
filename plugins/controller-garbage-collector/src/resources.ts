import { apiVersionOf, RESOURCES, type OwnerReference, type ResourceType } from '@skiff/api';
import { GcError } from './errors.js';

/** How a resource is named in options and queue items: `pods`, `replicasets.apps`. */
export function resourceId(type: ResourceType): string {
  return type.group ? `${type.resource}.${type.group}` : type.resource;
}

const KNOWN: readonly ResourceType[] = Object.values(RESOURCES);

/** The resource types named in the `resources` option, by plural name (`pods`) or with their group (`replicasets.apps`). */
export function resolveResources(names: readonly string[]): ResourceType[] {
  return [...new Set(names)].map((name) => {
    const type = KNOWN.find((candidate) => candidate.resource === name || resourceId(candidate) === name);
    if (!type) throw new GcError('SKIFF_ERR_GC_UNKNOWN_RESOURCE', { name, known: KNOWN.map(resourceId).join(', ') });
    return type;
  });
}

/** The resource type an owner reference points to, if it is one Skiff knows. */
export function ownerTypeOf(ref: OwnerReference): ResourceType | undefined {
  return KNOWN.find((type) => type.kind === ref.kind && apiVersionOf(type) === ref.apiVersion);
}
