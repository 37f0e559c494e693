import { RESOURCES, type CrossVersionObjectReference, type CustomResourceDefinition, type ResourceType } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { HpaError } from './errors.js';

/** `apps/v1` → { group: 'apps', version: 'v1' }; `v1` → the core group. */
function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/**
 * The resource a scale target reference names: a built-in kind (Deployment, ReplicaSet, StatefulSet,
 * ReplicationController…) or a custom resource of a served version. Whether it has `/scale` is for the
 * API server to say when the controller reads it.
 */
export async function resolveScaleTarget(client: Pick<ApiClient, 'list'>, ref: CrossVersionObjectReference): Promise<ResourceType> {
  const apiVersion = ref.apiVersion ?? '';
  const { group, version } = splitApiVersion(apiVersion);
  const builtins = Object.values(RESOURCES).filter((type) => type.group === group && type.kind === ref.kind);
  const builtin = builtins.find((type) => type.version === version) ?? builtins[0];
  if (builtin) return builtin;
  if (group) {
    const definitions = await client.list<CustomResourceDefinition>(RESOURCES.customresourcedefinitions);
    for (const { spec } of definitions.items) {
      if (spec.group !== group || spec.names.kind !== ref.kind) continue;
      if (!spec.versions.some((candidate) => candidate.name === version && candidate.served)) continue;
      return { group, version, resource: spec.names.plural, kind: ref.kind, namespaced: spec.scope === 'Namespaced' };
    }
  }
  throw new HpaError('SKIFF_ERR_HPA_UNKNOWN_TARGET', { kind: ref.kind, apiVersion });
}
