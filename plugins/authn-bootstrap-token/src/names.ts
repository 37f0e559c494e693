export const PLUGIN_NAME = '@skiff/plugin-authn-bootstrap-token';

/** Where bootstrap token Secrets live, what they are named and typed, as kubeadm writes them. */
export const TOKEN_NAMESPACE = 'kube-system';
export const TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';

/** The keys of a bootstrap token Secret's data. A usage `<u>` is the key `usage-bootstrap-<u>` set to "true". */
export const TOKEN_DATA = Object.freeze({
  ID: 'token-id',
  SECRET: 'token-secret',
  EXPIRATION: 'expiration',
  DESCRIPTION: 'description',
  EXTRA_GROUPS: 'auth-extra-groups',
  USAGE_PREFIX: 'usage-bootstrap-',
});

/** `<id>.<secret>`: six and sixteen characters of lower-case letters and digits. */
export const BOOTSTRAP_TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;

/** A group a token may add to `system:bootstrappers` (the only prefix Kubernetes lets it claim). */
export const EXTRA_GROUP_PATTERN = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

/** Who a bootstrap token authenticates as: `system:bootstrap:<id>`, in these groups. */
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
export const AUTHENTICATED_GROUP = 'system:authenticated';
