export const PLUGIN_NAME = '@skiff/plugin-authz-webhook';

export const SUBJECT_ACCESS_REVIEW_API_VERSION = 'authorization.k8s.io/v1';

export const DEFAULTS = Object.freeze({
  timeoutMs: 3_000,
  authorizedTTLSeconds: 300,
  unauthorizedTTLSeconds: 30,
  cacheSize: 10_000,
});

/** The longest a webhook call may take, as kube-apiserver's AuthorizationConfiguration allows. */
export const MAX_TIMEOUT_MS = 30_000;

/** SubjectAccessReview answers are small; a larger one is refused rather than buffered. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
