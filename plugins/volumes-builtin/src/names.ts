export const PLUGIN_NAME = '@skiff/plugin-volumes-builtin';

/**
 * The volume plugins' names, as Kubernetes names them; a pod's volume folder is
 * `<node dataDir>/pods/<uid>/volumes/<name with / as ~>/<volume>` (`kubernetes.io~empty-dir/cache`).
 */
export const VOLUME_PLUGIN = Object.freeze({
  EMPTY_DIR: 'kubernetes.io/empty-dir',
  CONFIG_MAP: 'kubernetes.io/configmap',
  SECRET: 'kubernetes.io/secret',
  HOST_PATH: 'kubernetes.io/host-path',
  PROJECTED: 'kubernetes.io/projected',
  DOWNWARD_API: 'kubernetes.io/downward-api',
  PERSISTENT_VOLUME_CLAIM: 'kubernetes.io/persistent-volume-claim',
});

/** The symlink that names the current payload folder of a projected volume (configMap, secret…), as in Kubernetes. */
export const DATA_LINK = '..data';

/** Folder and file modes the kubelet uses: emptyDir folders are world-writable, as in Kubernetes. */
export const EMPTY_DIR_MODE = 0o777;
export const PAYLOAD_DIR_MODE = 0o755;

/** A ServiceAccount token is requested again once 80% of its lifetime has passed, or after a day. */
export const TOKEN_REFRESH_FRACTION = 0.8;
export const TOKEN_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** serviceAccountToken sources without expirationSeconds ask for an hour. */
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;

/** The event a Memory-medium emptyDir records when it cannot be a tmpfs (the kubelet is not root). */
export const TMPFS_UNAVAILABLE_REASON = 'TmpfsUnavailable';
