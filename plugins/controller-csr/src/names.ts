export const PLUGIN_NAME = '@skiff/plugin-controller-csr';

/** The names `enabled` in the controller manager's options refers to, as in kube-controller-manager. */
export const APPROVING_CONTROLLER = 'csrapproving';
export const SIGNING_CONTROLLER = 'csrsigning';
export const CLEANER_CONTROLLER = 'csrcleaner';

/** The built-in signers this package approves for and signs as. */
export const SIGNER = Object.freeze({
  KUBE_APISERVER_CLIENT: 'kubernetes.io/kube-apiserver-client',
  KUBE_APISERVER_CLIENT_KUBELET: 'kubernetes.io/kube-apiserver-client-kubelet',
  KUBELET_SERVING: 'kubernetes.io/kubelet-serving',
});
export type SignerName = (typeof SIGNER)[keyof typeof SIGNER];

/** CertificateSigningRequest condition types. */
export const CONDITION = Object.freeze({
  APPROVED: 'Approved',
  DENIED: 'Denied',
  FAILED: 'Failed',
});

/** Reasons of the conditions this package writes. */
export const REASON = Object.freeze({
  AUTO_APPROVED: 'AutoApproved',
  /** The request breaks its signer's rules, or cannot be read: it will never be signed. */
  SIGNER_VALIDATION_FAILURE: 'SignerValidationFailure',
});

/** A node's user name is this prefix and the node's name; every node is in the group. */
export const NODE_USER_PREFIX = 'system:node:';
export const NODES_GROUP = 'system:nodes';

/** The subresources of certificatesigningrequests a SubjectAccessReview asks about before a kubelet client request is approved. */
export const APPROVAL_PERMISSION = Object.freeze({
  GROUP: 'certificates.k8s.io',
  RESOURCE: 'certificatesigningrequests',
  NODE_CLIENT: 'nodeclient',
  SELF_NODE_CLIENT: 'selfnodeclient',
});

/** Defaults of the options, as kube-controller-manager's. */
export const DEFAULTS = Object.freeze({
  /** --cluster-signing-duration: a year. */
  DURATION_SECONDS: 365 * 24 * 60 * 60,
  /** Approved-and-issued, denied and failed requests are kept an hour. */
  FINISHED_RETENTION_SECONDS: 60 * 60,
  /** Requests nobody approved or denied are kept a day. */
  PENDING_RETENTION_SECONDS: 24 * 60 * 60,
});

/** The shortest certificate a request may ask for (`spec.expirationSeconds`), as the API server checks. */
export const MIN_EXPIRATION_SECONDS = 600;
/** How far back notBefore is set, so clocks a little behind the signer's already accept the certificate. */
export const BACKDATE_SECONDS = 5 * 60;
