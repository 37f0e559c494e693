export const PLUGIN_NAME = '@skiff/plugin-controller-root-ca-publisher';
/** The name `enabled` in the controller manager's options refers to (kube-controller-manager's `root-ca-cert-publisher`). */
export const CONTROLLER_NAME = 'root-ca-cert-publisher';

/** The ConfigMap every namespace holds, and its key, as in Kubernetes (projected service account volumes read them). */
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
export const ROOT_CA_KEY = 'ca.crt';
