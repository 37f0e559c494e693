import { RESOURCES } from '@skiff/api';

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
  /** Set by the scheduler on a WaitForFirstConsumer claim: provision its volume for this node. */
  SELECTED_NODE: 'volume.kubernetes.io/selected-node',
});

/** The node label a provisioned WaitForFirstConsumer volume is pinned by. */
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';

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
  WAIT_FOR_FIRST_CONSUMER: 'WaitForFirstConsumer',
  WAIT_FOR_POD_SCHEDULED: 'WaitForPodScheduled',
});

/** The plugin entry (index.ts) reads StorageClasses under this name. */
export const STORAGE_CLASSES = RESOURCES.storageclasses;
