export const PLUGIN_NAME = '@skiff/plugin-admission-pod-security';

/** The Kubernetes minor Skiff serves (1.36): `latest`, and any newer pinned version, evaluate as this one. */
export const LATEST_MINOR = 36;

const PREFIX = 'pod-security.kubernetes.io/';

/** The namespace labels that choose a policy for each mode. */
export const LABELS = Object.freeze({
  enforce: `${PREFIX}enforce`,
  'enforce-version': `${PREFIX}enforce-version`,
  audit: `${PREFIX}audit`,
  'audit-version': `${PREFIX}audit-version`,
  warn: `${PREFIX}warn`,
  'warn-version': `${PREFIX}warn-version`,
});

/** Annotations on the request's audit event, as kube-apiserver records them. */
export const AUDIT_ANNOTATIONS = Object.freeze({
  enforcePolicy: `${PREFIX}enforce-policy`,
  auditViolations: `${PREFIX}audit-violations`,
  exempt: `${PREFIX}exempt`,
  error: `${PREFIX}error`,
});

/** Subresources of pods that cannot change what the policy looks at. */
export const IGNORED_POD_SUBRESOURCES: ReadonlySet<string> = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);

/** At most this many existing pods are checked when a namespace gets a stricter enforce level, and for at most this long. */
export const NAMESPACE_POD_CHECK_LIMIT = 3000;
export const NAMESPACE_POD_CHECK_TIMEOUT_MS = 1000;
