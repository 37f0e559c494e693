export const PLUGIN_NAME = '@skiff/plugin-controller-bootstrap-signer';

/** The names `enabled` in the controller manager's options refers to, as in kube-controller-manager. */
export const SIGNER_CONTROLLER_NAME = 'bootstrapsigner';
export const CLEANER_CONTROLLER_NAME = 'tokencleaner';

/** The ConfigMap anyone may read to find the cluster, and its keys: the kubeconfig and one signature per signing token. */
export const CLUSTER_INFO_NAMESPACE = 'kube-public';
export const CLUSTER_INFO_NAME = 'cluster-info';
export const KUBECONFIG_KEY = 'kubeconfig';
export const SIGNATURE_KEY_PREFIX = 'jws-kubeconfig-';

/** What a token may be used for: to authenticate as system:bootstrap:<id>, to sign cluster-info. */
export const TOKEN_USAGES = Object.freeze(['authentication', 'signing'] as const);
export type TokenUsage = (typeof TOKEN_USAGES)[number];

/** The alphabet and lengths of a token's id and secret (`<id>.<secret>`). */
export const TOKEN_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const TOKEN_ID_LENGTH = 6;
export const TOKEN_SECRET_LENGTH = 16;

/** What `kubeadm token create` gives a token unless told otherwise. */
export const DEFAULT_TOKEN_TTL_SECONDS = 24 * 3600;
export const DEFAULT_TOKEN_GROUPS = Object.freeze(['system:bootstrappers:kubeadm:default-node-token']);

/** The objects kubeadm creates so that nodes can join with a bootstrap token. */
export const RBAC = Object.freeze({
  KUBELET_BOOTSTRAP: 'kubeadm:kubelet-bootstrap',
  NODE_AUTOAPPROVE_BOOTSTRAP: 'kubeadm:node-autoapprove-bootstrap',
  NODE_AUTOAPPROVE_ROTATION: 'kubeadm:node-autoapprove-certificate-rotation',
  CLUSTER_INFO_READER: 'kubeadm:bootstrap-signer-clusterinfo',
});
