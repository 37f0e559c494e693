import { ADMISSION_STAGE } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-admission-validating-policy';

/**
 * Where policies run among the validating taps: after the in-process rules of LIMITS, before quota (as
 * kube-apiserver runs ValidatingAdmissionPolicy late, just before the webhooks and ResourceQuota).
 */
export const VALIDATING_POLICY_STAGE = ADMISSION_STAGE.LIMITS + 100;

/** Who the plugin's watches of policies, bindings and params come from. */
export const VALIDATING_POLICY_USER = Object.freeze({
  username: 'system:admission-validating-policy',
  uid: 'system:admission-validating-policy',
  groups: ['system:masters', 'system:authenticated'],
});

/** The audit annotation a binding with the Audit action records a failed validation under. */
export const VALIDATION_FAILURE_ANNOTATION = 'validation.policy.admission.k8s.io/validation_failure';

export const ADMISSIONREGISTRATION_GROUP = 'admissionregistration.k8s.io';

/**
 * The resources policies never apply to, as upstream exempts them: a policy must not be able to lock its own
 * configuration (or the webhooks') away.
 */
export const EXEMPT_RESOURCES: ReadonlySet<string> = new Set([
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
]);
