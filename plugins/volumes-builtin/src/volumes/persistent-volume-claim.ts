import { isApiError, RESOURCES, type PersistentVolume, type PersistentVolumeClaim, type Pod } from '@skiff/api';
import type { VolumeContext, VolumePlugin } from '@skiff/kernel';
import { VolumeError } from '../errors.js';
import { VOLUME_PLUGIN } from '../names.js';
import { isObject, onNode, podVolume, requireContext, type Json } from './common.js';

/**
 * persistentVolumeClaim: the claim's bound PersistentVolume, mounted from its path on this node (hostPath or
 * local volumes, which is what the host-path provisioner makes; on a simulated node, the path's stand-in). An
 * unbound claim keeps the pod waiting.
 */
export function persistentVolumeClaimPlugin(): VolumePlugin {
  return {
    name: VOLUME_PLUGIN.PERSISTENT_VOLUME_CLAIM,
    canSupport: (volume) => isObject(volume.persistentVolumeClaim),
    async setUp(pod: Pod, volume: Json, _dir: string, context?: VolumeContext) {
      const { client } = requireContext(context, VOLUME_PLUGIN.PERSISTENT_VOLUME_CLAIM, volume);
      const source = podVolume(volume).persistentVolumeClaim ?? { claimName: '' };
      const namespace = pod.metadata.namespace!;
      const claimName = source.claimName ?? '';
      const claim = await client.get<PersistentVolumeClaim>(RESOURCES.persistentvolumeclaims, claimName, namespace).catch((err: unknown) => {
        if (isApiError(err, 'NotFound')) throw new VolumeError('SKIFF_ERR_VOLUME_OBJECT_NOT_FOUND', { kind: 'persistentvolumeclaim', name: claimName });
        throw err;
      });
      const volumeName = claim.spec?.volumeName ?? '';
      const phase = claim.status?.phase ?? '';
      if (phase !== 'Bound' || !volumeName) throw new VolumeError('SKIFF_ERR_VOLUME_CLAIM_UNBOUND', { namespace, name: claimName, phase, volume: volumeName });
      const persistentVolume = await client.get<PersistentVolume>(RESOURCES.persistentvolumes, volumeName).catch((err: unknown) => {
        if (isApiError(err, 'NotFound')) throw new VolumeError('SKIFF_ERR_VOLUME_OBJECT_NOT_FOUND', { kind: 'persistentvolume', name: volumeName });
        throw err;
      });
      const path = persistentVolume.spec?.hostPath?.path ?? persistentVolume.spec?.local?.path;
      if (!path) throw new VolumeError('SKIFF_ERR_VOLUME_CLAIM_SOURCE', { name: volumeName });
      return { path: onNode(context, path), readOnly: source.readOnly === true };
    },
    async tearDown() {
      // The volume outlives the pod; its reclaim policy is the storage plugin's business.
    },
  };
}
