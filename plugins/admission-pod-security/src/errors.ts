import { ApiError, type StatusCause } from '@skiff/api';
import { AdmissionError, formatMessage } from '@skiff/kernel';

/** Every refusal of the plugin: a stable code and kube-apiserver's wording. */
export const POD_SECURITY_ERRORS = Object.freeze({
  /** 403: the enforce level refuses the pod. */
  SKIFF_ERR_POD_SECURITY_FORBIDDEN: '{resource} "{name}" is forbidden: violates PodSecurity "{policy}": {violations}',
  /** 422: a namespace's pod-security labels do not parse. */
  SKIFF_ERR_POD_SECURITY_INVALID_LABELS: 'Namespace "{name}" is invalid: {causes}',
} as const);

export type PodSecurityErrorCode = keyof typeof POD_SECURITY_ERRORS;

/** The enforce level's refusal: `pods "web" is forbidden: violates PodSecurity "restricted:latest": …` (403). */
export class PodSecurityForbidden extends AdmissionError {
  readonly code: PodSecurityErrorCode = 'SKIFF_ERR_POD_SECURITY_FORBIDDEN';

  constructor(params: { resource: string; name: string; policy: string; violations: string }) {
    super(formatMessage(POD_SECURITY_ERRORS.SKIFF_ERR_POD_SECURITY_FORBIDDEN, params));
  }
}

/**
 * Namespace labels that do not parse (422), with the causes and the namespace named in the details, so kubectl
 * prints `The Namespace "team" is invalid: …`. `causes` reads as Kubernetes prints a list of field errors.
 */
export function invalidLabels(name: string, causes: StatusCause[], causesText: string): ApiError {
  const message = formatMessage(POD_SECURITY_ERRORS.SKIFF_ERR_POD_SECURITY_INVALID_LABELS, { name, causes: causesText });
  return new ApiError('SKIFF_ERR_API_INVALID', message, { name, kind: 'Namespace', causes });
}
