import {
  containerResourceValue,
  isApiError,
  metadataFieldValue,
  RESOURCES,
  type ConfigMap,
  type ConfigMapProjection,
  type DownwardAPIVolumeFile,
  type KubeObject,
  type Pod,
  type ResourceType,
  type Secret,
  type SecretProjection,
} from '@skiff/api';
import type { VolumeContext } from '@skiff/kernel';
import type { Payload } from './atomic-writer.js';
import { VolumeError } from './errors.js';

/** The file mode Kubernetes gives projected files that name none: 0644. */
export const DEFAULT_FILE_MODE = 0o644;

/** An object of the pod's namespace, or undefined when it does not exist. */
async function find<T extends KubeObject>(context: VolumeContext, type: ResourceType, namespace: string, name: string): Promise<T | undefined> {
  try {
    return await context.client.get<T>(type, name, namespace);
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

function project(
  entries: Map<string, Buffer>,
  projection: ConfigMapProjection | SecretProjection,
  defaultMode: number,
  missingKey: (key: string) => Error,
  payload: Payload = new Map(),
): Payload {
  if (!projection.items?.length) {
    for (const [key, data] of entries) payload.set(key, { data, mode: defaultMode });
    return payload;
  }
  for (const item of projection.items) {
    const data = entries.get(item.key);
    if (data === undefined) {
      if (projection.optional) continue;
      throw missingKey(item.key);
    }
    payload.set(item.path, { data, mode: item.mode ?? defaultMode });
  }
  return payload;
}

/** The files of a configMap volume or projection; an optional one that does not exist is empty. */
export async function configMapPayload(
  context: VolumeContext,
  pod: Pod,
  projection: ConfigMapProjection,
  defaultMode: number,
  payload?: Payload,
): Promise<Payload> {
  const name = projection.name ?? '';
  const configMap = await find<ConfigMap>(context, RESOURCES.configmaps, pod.metadata.namespace!, name);
  if (!configMap) {
    if (projection.optional) return payload ?? new Map();
    throw new VolumeError('SKIFF_ERR_VOLUME_OBJECT_NOT_FOUND', { kind: 'configmap', name });
  }
  const entries = new Map<string, Buffer>();
  for (const [key, value] of Object.entries(configMap.data ?? {})) entries.set(key, Buffer.from(value, 'utf8'));
  for (const [key, value] of Object.entries(configMap.binaryData ?? {})) entries.set(key, Buffer.from(value, 'base64'));
  return project(entries, projection, defaultMode, (key) => new VolumeError('SKIFF_ERR_VOLUME_CONFIG_MAP_KEY', { key }), payload);
}

/** The files of a secret volume or projection (values decoded from base64). */
export async function secretPayload(context: VolumeContext, pod: Pod, projection: SecretProjection, defaultMode: number, payload?: Payload): Promise<Payload> {
  const name = projection.name ?? '';
  const secret = await find<Secret>(context, RESOURCES.secrets, pod.metadata.namespace!, name);
  if (!secret) {
    if (projection.optional) return payload ?? new Map();
    throw new VolumeError('SKIFF_ERR_VOLUME_OBJECT_NOT_FOUND', { kind: 'secret', name });
  }
  const entries = new Map<string, Buffer>();
  for (const [key, value] of Object.entries(secret.data ?? {})) entries.set(key, Buffer.from(value, 'base64'));
  return project(entries, projection, defaultMode, (key) => new VolumeError('SKIFF_ERR_VOLUME_SECRET_KEY', { key }), payload);
}

/** The files of a downwardAPI volume or projection: the pod's metadata fields and its containers' resources. */
export function downwardAPIPayload(
  context: VolumeContext | undefined,
  pod: Pod,
  items: DownwardAPIVolumeFile[],
  defaultMode: number,
  payload: Payload = new Map(),
): Payload {
  for (const item of items) {
    let value: string;
    if (item.fieldRef) value = metadataFieldValue(pod.metadata, item.fieldRef.fieldPath);
    else if (item.resourceFieldRef) {
      const name = item.resourceFieldRef.containerName;
      const container = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find((c) => c.name === name);
      if (!container) throw new Error(`cannot find container "${name ?? ''}" in pod ${pod.metadata.namespace}/${pod.metadata.name}`);
      value = containerResourceValue(item.resourceFieldRef, container, context?.node()?.status?.allocatable);
    } else continue;
    payload.set(item.path, { data: Buffer.from(value, 'utf8'), mode: item.mode ?? defaultMode });
  }
  return payload;
}
