import { ADMISSION_STAGE } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-admission-node-restriction';

/** After ServiceAccount, before PodSecurity, as kube-apiserver orders its plugins. */
export const NODE_RESTRICTION_STAGE = ADMISSION_STAGE.SERVICE_ACCOUNT + 150;

export const NODE_USER_PREFIX = 'system:node:';
export const NODES_GROUP = 'system:nodes';
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** The kubelet's copy of a static pod carries this annotation. */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
/** Labels under this prefix (and its subdomains) are for the cluster's administrators to set on nodes, never the nodes. */
export const NODE_RESTRICTION_LABEL_PREFIX = 'node-restriction.kubernetes.io';
