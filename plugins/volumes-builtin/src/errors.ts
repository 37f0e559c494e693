import { codedError } from '@skiff/kernel';

/**
 * Every volume set-up failure: a stable code and the message Kubernetes' kubelet gives, which the kubelet puts in
 * its FailedMount event (`MountVolume.SetUp failed for volume "config" : configmap "app" not found`).
 */
export const VOLUME_ERRORS = Object.freeze({
  SKIFF_ERR_VOLUME_NO_CONTEXT: 'volume plugin "{plugin}" needs the kubelet context (an API client) to set up volume "{volume}"',
  SKIFF_ERR_VOLUME_OBJECT_NOT_FOUND: '{kind} "{name}" not found',
  SKIFF_ERR_VOLUME_CONFIG_MAP_KEY: 'configmap references non-existent config key: {key}',
  SKIFF_ERR_VOLUME_SECRET_KEY: 'references non-existent secret key: {key}',
  SKIFF_ERR_VOLUME_PATH: 'invalid path "{path}": {detail}',
  SKIFF_ERR_VOLUME_HOST_PATH_TYPE: 'hostPath type check failed: {path} is not {what}',
  SKIFF_ERR_VOLUME_HOST_PATH_RELATIVE: 'hostPath {path} is not an absolute path',
  SKIFF_ERR_VOLUME_PROJECTION: 'unsupported projection in volume "{volume}": {source}',
  SKIFF_ERR_VOLUME_TOKEN: 'failed to fetch token: {detail}',
  SKIFF_ERR_VOLUME_CLAIM_UNBOUND: 'PVC {namespace}/{name} has non-bound phase ("{phase}") or empty pvc.Spec.VolumeName ("{volume}")',
  SKIFF_ERR_VOLUME_CLAIM_SOURCE: 'PersistentVolume "{name}" has no hostPath or local path this node can mount',
  SKIFF_ERR_VOLUME_MOUNT: 'mount of {what} at {path} failed: {detail}',
} as const);

export type VolumeErrorCode = keyof typeof VOLUME_ERRORS;

export class VolumeError extends codedError('VolumeError', VOLUME_ERRORS) {}
