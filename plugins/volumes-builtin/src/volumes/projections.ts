import type { Pod, Volume } from '@skiff/api';
import type { VolumeContext, VolumePlugin } from '@skiff/kernel';
import { writeAtomically, type Payload } from '../atomic-writer.js';
import { VolumeError } from '../errors.js';
import { PAYLOAD_DIR_MODE, VOLUME_PLUGIN } from '../names.js';
import { configMapPayload, DEFAULT_FILE_MODE, downwardAPIPayload, secretPayload } from '../payloads.js';
import type { ServiceAccountTokens } from '../service-account-tokens.js';
import { tokenFile } from '../token-file-access.js';
import { isObject, makeVolumeDir, podVolume, removeVolumeDir, requireContext, type BuiltinVolumeOptions, type Json } from './common.js';

/** The volume sources whose files the kubelet writes. */
type PayloadSource = 'configMap' | 'secret' | 'downwardAPI' | 'projected';

/**
 * A volume whose files the kubelet writes from API data: set up (and refreshed on every resync) by writing the
 * payload atomically, always mounted read-only. With the `secretsOnTmpfs` option, secrets and projected volumes
 * sit on a tmpfs when the kubelet runs as root, so their contents never touch the disk.
 */
function payloadPlugin<F extends PayloadSource>(
  name: string,
  field: F,
  memoryBacked: boolean,
  options: BuiltinVolumeOptions,
  payload: (context: VolumeContext | undefined, pod: Pod, source: NonNullable<Volume[F]>, volume: Volume) => Promise<Payload>,
  needsApi = true,
): VolumePlugin {
  return {
    name,
    canSupport: (volume) => isObject(volume[field]),
    async setUp(pod: Pod, json: Json, dir: string, context?: VolumeContext) {
      if (needsApi) requireContext(context, name, json);
      const volume = podVolume(json);
      const files = withFsGroup(pod, await payload(context, pod, volume[field]!, volume));
      const shortfall = await makeVolumeDir(dir, PAYLOAD_DIR_MODE, { wanted: memoryBacked && options.secretsOnTmpfs, allowed: true });
      if (shortfall) context?.logger.warn({ volume: volume.name, reason: shortfall }, 'the volume is a folder on disk, not a tmpfs');
      await writeAtomically(dir, files);
      return { readOnly: true };
    },
    tearDown: (_pod, _name, dir, context) => removeVolumeDir(dir, context),
  };
}

/**
 * The pod's fsGroup owns every file, which its group may read (`mode | 0440`), as the kubelet's volume ownership
 * does for these read-only volumes: a container running as another user in that group reads a 0440 secret.
 */
export function withFsGroup(pod: Pod, files: Payload): Payload {
  const gid = pod.spec?.securityContext?.fsGroup;
  if (gid === undefined) return files;
  return new Map([...files].map(([path, file]) => [path, { ...{}, ...file, mode: file.mode | 0o440, owner: { ...{}, ...file.owner, gid } }]));
}

const modeOf = (source: { defaultMode?: number }): number => (typeof source.defaultMode === 'number' ? source.defaultMode : DEFAULT_FILE_MODE);

export function configMapPlugin(options: BuiltinVolumeOptions): VolumePlugin {
  return payloadPlugin(VOLUME_PLUGIN.CONFIG_MAP, 'configMap', false, options, (context, pod, source) =>
    configMapPayload(context!, pod, source, modeOf(source)),
  );
}

export function secretPlugin(options: BuiltinVolumeOptions): VolumePlugin {
  return payloadPlugin(VOLUME_PLUGIN.SECRET, 'secret', true, options, (context, pod, source) =>
    secretPayload(context!, pod, { name: source.secretName, items: source.items, optional: source.optional }, modeOf(source)),
  );
}

export function downwardAPIPlugin(options: BuiltinVolumeOptions): VolumePlugin {
  return payloadPlugin(
    VOLUME_PLUGIN.DOWNWARD_API,
    'downwardAPI',
    false,
    options,
    async (context, pod, source) => downwardAPIPayload(context, pod, source.items ?? [], modeOf(source)),
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
    for (const projection of source.sources ?? []) {
      if (projection.configMap) await configMapPayload(context!, pod, projection.configMap, defaultMode, payload);
      else if (projection.secret) await secretPayload(context!, pod, projection.secret, defaultMode, payload);
      else if (projection.downwardAPI) downwardAPIPayload(context, pod, projection.downwardAPI.items ?? [], defaultMode, payload);
      else if (projection.serviceAccountToken) {
        const token = projection.serviceAccountToken;
        payload.set(token.path, tokenFile(pod, Buffer.from(await tokens.token(context!, pod, token), 'utf8'), defaultMode));
      } else
        throw new VolumeError('SKIFF_ERR_VOLUME_PROJECTION', {
          volume: volume.name,
          source: Object.keys(projection).join(', ') || 'empty',
        });
    }
    return payload;
  });
  return {
    ...{},
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
