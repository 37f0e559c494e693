import type { ResourceType } from '@skiff/api';

export const PLUGIN_NAME = '@skiff/plugin-storage-host-path';
/** The name `enabled` in the controller manager's options refers to (kube-controller-manager's name for it). */
export const CONTROLLER_NAME = 'persistentvolume-binder';

/** The StorageClass `provisioner` this plugin answers for. */
export const PROVISIONER = 'skiff.dev/host-path';
export const DEFAULT_STORAGE_CLASS_NAME = 'standard';

export const ANNOTATION = Object.freeze({
  IS_DEFAULT_CLASS: 'storageclass.kubernetes.io/is-default-class',
  IS_DEFAULT_CLASS_BETA: 'storageclass.beta.kubernetes.io/is-default-class',
  PROVISIONED_BY: 'pv.kubernetes.io/provisioned-by',
  BIND_COMPLETED: 'pv.kubernetes.io/bind-completed',
  BOUND_BY_CONTROLLER: 'pv.kubernetes.io/bound-by-controller',
  STORAGE_PROVISIONER: 'volume.kubernetes.io/storage-provisioner',
  STORAGE_PROVISIONER_BETA: 'volume.beta.kubernetes.io/storage-provisioner',
});

export const FINALIZER = Object.freeze({
  PV_PROTECTION: 'kubernetes.io/pv-protection',
  PVC_PROTECTION: 'kubernetes.io/pvc-protection',
});

/** Event reasons, as kube-controller-manager's volume controllers give them. */
export const EVENT_REASON = Object.freeze({
  PROVISIONING_SUCCEEDED: 'ProvisioningSucceeded',
  PROVISIONING_FAILED: 'ProvisioningFailed',
  FAILED_BINDING: 'FailedBinding',
  EXTERNAL_PROVISIONING: 'ExternalProvisioning',
  VOLUME_DELETE: 'VolumeDelete',
});

const type = (group: string, version: string, resource: string, kind: string, namespaced: boolean): ResourceType =>
  Object.freeze({ group, version, resource, kind, namespaced });

export const STORAGE_CLASSES = type('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false);
export const PERSISTENT_VOLUMES = type('', 'v1', 'persistentvolumes', 'PersistentVolume', false);
export const PERSISTENT_VOLUME_CLAIMS = type('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true);
export const PODS = type('', 'v1', 'pods', 'Pod', true);
