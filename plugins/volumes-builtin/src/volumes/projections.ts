import type { Pod } from '@skiff/api';
import type { VolumeContext, VolumePlugin } from '@skiff/kernel';
import { writeAtomically, type Payload } from '../atomic-writer.js';
import { VolumeError } from '../errors.js';
import { PAYLOAD_DIR_MODE, VOLUME_PLUGIN } from '../names.js';
import {
  configMapPayload,
  DEFAULT_FILE_MODE,
  downwardAPIPayload,
  secretPayload,
  type DownwardAPIFile,
  type KeyToPath,
  type ObjectProjection,
} from '../payloads.js';
import type { ServiceAccountTokens, TokenProjection } from '../service-account-tokens.js';
import { isObject, makeVolumeDir, removeVolumeDir, requireContext, type BuiltinVolumeOptions, type Json } from './common.js';

/**
 * A volume whose files the kubelet writes from API data: set up (and refreshed on every resync) by writing the
 * payload atomically, always mounted read-only. With the `secretsOnTmpfs` option, secrets and projected volumes
 * sit on a tmpfs when the kubelet runs as root, so their contents never touch the disk.
 */
function payloadPlugin(
  name: string,
  field: string,
  memoryBacked: boolean,
  options: BuiltinVolumeOptions,
  payload: (context: VolumeContext | undefined, pod: Pod, source: Json, volume: Json) => Promise<Payload>,
  needsApi = true,
): VolumePlugin {
  return {
    name,
    canSupport: (volume) => isObject(volume[field]),
    async setUp(pod: Pod, volume: Json, dir: string, context?: VolumeContext) {
      if (needsApi) requireContext(context, name, volume);
      const files = await payload(context, pod, volume[field] as Json, volume);
      const shortfall = await makeVolumeDir(dir, PAYLOAD_DIR_MODE, { wanted: memoryBacked && options.secretsOnTmpfs, allowed: true });
      if (shortfall) context?.logger.warn({ volume: volume.name, reason: shortfall }, 'the volume is a folder on disk, not a tmpfs');
      await writeAtomically(dir, files);
      return { readOnly: true };
    },
    tearDown: (_pod, _name, dir, context) => removeVolumeDir(dir, context),
  };
}

const modeOf = (source: Json): number => (typeof source.defaultMode === 'number' ? source.defaultMode : DEFAULT_FILE_MODE);

function objectProjection(source: Json, nameField: 'name' | 'secretName'): ObjectProjection {
  return { name: source[nameField] as string | undefined, items: source.items as KeyToPath[] | undefined, optional: source.optional === true };
}

export function configMapPlugin(options: BuiltinVolumeOptions): VolumePlugin {
  return payloadPlugin(VOLUME_PLUGIN.CONFIG_MAP, 'configMap', false, options, (context, pod, source) =>
    configMapPayload(context!, pod, objectProjection(source, 'name'), modeOf(source)),
  );
}

export function secretPlugin(options: BuiltinVolumeOptions): VolumePlugin {
  return payloadPlugin(VOLUME_PLUGIN.SECRET, 'secret', true, options, (context, pod, source) =>
    secretPayload(context!, pod, objectProjection(source, 'secretName'), modeOf(source)),
  );
}

export function downwardAPIPlugin(options: BuiltinVolumeOptions): VolumePlugin {
  return payloadPlugin(
    VOLUME_PLUGIN.DOWNWARD_API,
    'downwardAPI',
    false,
    options,
    async (context, pod, source) => downwardAPIPayload(context, pod, (source.items as DownwardAPIFile[] | undefined) ?? [], modeOf(source)),
    false,
  );
}

/**
 * projected: several sources in one folder — ConfigMaps, Secrets, downward API fields and a ServiceAccount token
 * bound to the pod (the `kube-api-access-*` volume every pod gets from ServiceAccount admission).
 */
export function projectedPlugin(options: BuiltinVolumeOptions, tokens: ServiceAccountTokens): VolumePlugin {
  const plugin = payloadPlugin(VOLUME_PLUGIN.PROJECTED, 'projected', true, options, async (context, pod, source, volume) => {
    const defaultMode = modeOf(source);
    const payload: Payload = new Map();
    for (const projection of (source.sources as Json[] | undefined) ?? []) {
      if (isObject(projection.configMap)) await configMapPayload(context!, pod, objectProjection(projection.configMap, 'name'), defaultMode, payload);
      else if (isObject(projection.secret)) await secretPayload(context!, pod, objectProjection(projection.secret, 'name'), defaultMode, payload);
      else if (isObject(projection.downwardAPI))
        downwardAPIPayload(context, pod, (projection.downwardAPI.items as DownwardAPIFile[] | undefined) ?? [], defaultMode, payload);
      else if (isObject(projection.serviceAccountToken)) {
        const token = projection.serviceAccountToken as unknown as TokenProjection;
        payload.set(token.path, { data: Buffer.from(await tokens.token(context!, pod, token), 'utf8'), mode: defaultMode });
      } else
        throw new VolumeError('SKIFF_ERR_VOLUME_PROJECTION', {
          volume: String(volume.name ?? ''),
          source: Object.keys(projection).join(', ') || 'empty',
        });
    }
    return payload;
  });
  return {
    ...plugin,
    // The pod's tokens go with its volumes, or they would be held for every pod this kubelet ever ran. The uid is
    // all the kubelet knows of a pod it tears down from its folder alone, and all forget() needs.
    async tearDown(pod, volumeName, dir, context) {
      const uid = pod.metadata.uid;
      if (uid) tokens.forget(uid);
      await plugin.tearDown(pod, volumeName, dir, context);
    },
  };
}
