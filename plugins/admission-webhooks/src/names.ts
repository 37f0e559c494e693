import { ADMISSION_STAGE } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-admission-webhooks';

/**
 * Where mutating webhooks run among the mutating taps: after the built-in mutations (defaults, service accounts,
 * limits and the other LIMITS-stage plugins) and before quota, as kube-apiserver runs MutatingAdmissionWebhook
 * after its in-tree mutating plugins.
 */
export const MUTATING_WEBHOOK_STAGE = ADMISSION_STAGE.LIMITS + 200;

/**
 * Where validating webhooks run among the validating taps: after ValidatingAdmissionPolicy (LIMITS + 100) and
 * before ResourceQuota, the order kube-apiserver uses.
 */
export const VALIDATING_WEBHOOK_STAGE = ADMISSION_STAGE.LIMITS + 200;

/** Who the plugin's watches of webhook configurations, Services and EndpointSlices come from. */
export const WEBHOOK_WATCH_USER = Object.freeze({
  username: 'system:admission-webhooks',
  uid: 'system:admission-webhooks',
  groups: ['system:masters', 'system:authenticated'],
});

export const ADMISSIONREGISTRATION_GROUP = 'admissionregistration.k8s.io';

/**
 * Requests for these resources never go to webhooks, as upstream exempts them: a webhook must not be able to
 * lock its own configuration (or the admission policies) away.
 */
export const EXEMPT_RESOURCES: ReadonlySet<string> = new Set([
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

export const DEFAULT_TIMEOUT_SECONDS = 10;
export const MAX_TIMEOUT_SECONDS = 30;
/** The largest AdmissionReview answer read from a webhook. */
export const MAX_RESPONSE_BYTES = 3 * 1024 * 1024;
/** The port a service reference uses when it names none. */
export const DEFAULT_SERVICE_PORT = 443;
/** The label an EndpointSlice names its Service by. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** Audit annotation keys, as kube-apiserver writes them (`round_<n>_index_<i>` added per call). */
export const MUTATION_ANNOTATION_PREFIX = 'mutation.webhook.admission.k8s.io/';
export const PATCH_ANNOTATION_PREFIX = 'patch.webhook.admission.k8s.io/';
export const FAILED_OPEN_MUTATING_PREFIX = 'failed-open.mutation.webhook.admission.k8s.io/';
export const FAILED_OPEN_VALIDATING_PREFIX = 'failed-open.validating.webhook.admission.k8s.io/';
