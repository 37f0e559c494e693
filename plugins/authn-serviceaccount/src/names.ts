export const PLUGIN_NAME = '@skiff/plugin-authn-serviceaccount';

/** The issuer kube-apiserver clusters commonly use (`--service-account-issuer`). */
export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
/** Where the signing key is kept, relative to the data dir (beside the cluster CA, as kubeadm's sa.key). */
export const DEFAULT_KEY_FILE = 'pki/sa.key';

/** TokenRequest's expiration: the API's default, its smallest value, and its largest. */
export const DEFAULT_EXPIRATION_SECONDS = 3600;
export const MIN_EXPIRATION_SECONDS = 600;
export const MAX_EXPIRATION_SECONDS = 2 ** 32;

/** How far the clocks of the issuer and this server may disagree about `nbf` and a bound object's deletion. */
export const CLOCK_SKEW_SECONDS = 60;

export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';
export const AUTHENTICATED_GROUP = 'system:authenticated';

/** The private claim carrying what the token is bound to. */
export const KUBERNETES_CLAIM = 'kubernetes.io';

/** Keys of UserInfo.extra that Kubernetes sets for service account tokens. */
export const EXTRA = Object.freeze({
  POD_NAME: 'authentication.kubernetes.io/pod-name',
  POD_UID: 'authentication.kubernetes.io/pod-uid',
  NODE_NAME: 'authentication.kubernetes.io/node-name',
  NODE_UID: 'authentication.kubernetes.io/node-uid',
  CREDENTIAL_ID: 'authentication.kubernetes.io/credential-id',
});

export const TOKEN_REQUEST_GROUP = 'authentication.k8s.io';
export const TOKEN_REQUEST_API_VERSION = 'authentication.k8s.io/v1';

/** The discovery documents, as kube-apiserver serves them. */
export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';
