export const PLUGIN_NAME = '@skiff/plugin-admission-service-account';

/** The ServiceAccount a pod runs as when its spec names none. */
export const DEFAULT_SERVICE_ACCOUNT = 'default';

/** Where the API credentials (token, cluster CA, namespace) appear in every container. */
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The token volume's name: this prefix and five random characters (`kube-api-access-x7k2p`). */
export const TOKEN_VOLUME_PREFIX = 'kube-api-access-';

/** The token's lifetime: an hour and seven seconds, the value kube-apiserver asks for. */
export const TOKEN_EXPIRATION_SECONDS = 3607;

/** The ConfigMap the root CA publisher keeps in every namespace. */
export const ROOT_CA_CONFIG_MAP = 'kube-root-ca.crt';

/** 0644: the projected volume's file mode, written out rather than left to defaulting. */
export const TOKEN_VOLUME_MODE = 420;

/** Pods the kubelet mirrors from its static manifests carry this annotation. */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** A ServiceAccount annotated `"true"` limits its pods to its own secrets, as `limitSecretReferences` does for all. */
export const ENFORCE_MOUNTABLE_SECRETS_ANNOTATION = 'kubernetes.io/enforce-mountable-secrets';
