export const PLUGIN_NAME = '@skiff/plugin-scheduler-volume-binding';

/** The scheduler framework plugin this package registers (Kubernetes' name for it). */
export const VOLUME_BINDING = 'VolumeBinding';

export const ANNOTATION = Object.freeze({
  /** Set on a delayed-binding claim by the scheduler: provision its volume for this node. */
  SELECTED_NODE: 'volume.kubernetes.io/selected-node',
  BIND_COMPLETED: 'pv.kubernetes.io/bind-completed',
  BOUND_BY_CONTROLLER: 'pv.kubernetes.io/bound-by-controller',
  /** The deprecated way of naming a claim's or volume's class; read before spec.storageClassName, as upstream does. */
  BETA_STORAGE_CLASS: 'volume.beta.kubernetes.io/storage-class',
});

/** A StorageClass provisioner that says "no dynamic provisioning" (local volumes made by hand). */
export const NOT_SUPPORTED_PROVISIONER = 'kubernetes.io/no-provisioner';

/** The node label local volumes are pinned by. */
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/** Kubernetes' reasons and messages, word for word: users search for them. */
export const REASON = Object.freeze({
  UNBOUND_IMMEDIATE: 'pod has unbound immediate PersistentVolumeClaims',
  BIND_CONFLICT: "node(s) didn't find available persistent volumes to bind",
  NODE_CONFLICT: 'node(s) had volume node affinity conflict',
  PV_NOT_EXIST: 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)',
});

/** Upstream's VolumeBindingArgs default. */
export const DEFAULT_BIND_TIMEOUT_SECONDS = 600;
