import { formatMessage } from '@skiff/kernel';
import { AdmissionError, type AdmissionRequest } from '@skiff/kernel';

/**
 * Every refusal of the plugin: a stable code and the message template, as kube-apiserver words it after
 * `pods "<name>" is forbidden: `.
 */
export const SERVICE_ACCOUNT_ADMISSION_ERRORS = Object.freeze({
  SKIFF_ERR_SERVICE_ACCOUNT_NOT_FOUND: 'error looking up service account {namespace}/{name}: serviceaccount "{name}" not found',
  SKIFF_ERR_SERVICE_ACCOUNT_MIRROR_ACCOUNT: 'a mirror pod may not reference service accounts',
  SKIFF_ERR_SERVICE_ACCOUNT_MIRROR_SECRETS: 'a mirror pod may not reference secrets',
  SKIFF_ERR_SERVICE_ACCOUNT_MIRROR_TOKEN: 'a mirror pod may not use ServiceAccountToken volume projections',
  SKIFF_ERR_SERVICE_ACCOUNT_MIRROR_TRUST_BUNDLE: 'a mirror pod may not use ClusterTrustBundle projected volumes',
  SKIFF_ERR_SERVICE_ACCOUNT_SECRET_VOLUME:
    'volume with secret.secretName="{secret}" is not allowed because service account {account} does not reference that secret',
  SKIFF_ERR_SERVICE_ACCOUNT_SECRET_ENV:
    '{container} with envVar {env} referencing secret.secretName="{secret}" is not allowed because service account {account} does not reference that secret',
  SKIFF_ERR_SERVICE_ACCOUNT_SECRET_ENV_FROM:
    '{container} with envFrom referencing secret.secretName="{secret}" is not allowed because service account {account} does not reference that secret',
  SKIFF_ERR_SERVICE_ACCOUNT_PULL_SECRET:
    'imagePullSecrets[{index}].name="{secret}" is not allowed because service account {account} does not reference that imagePullSecret',
} as const);

export type ServiceAccountAdmissionErrorCode = keyof typeof SERVICE_ACCOUNT_ADMISSION_ERRORS;

/** A refusal as a Forbidden admission error: `pods "web" is forbidden: <message>`, with the code kept. */
export class ServiceAccountAdmissionError extends AdmissionError {
  constructor(
    request: Pick<AdmissionRequest, 'name'>,
    readonly code: ServiceAccountAdmissionErrorCode,
    params: Record<string, string | number> = {},
  ) {
    super(`pods "${request.name}" is forbidden: ${formatMessage(SERVICE_ACCOUNT_ADMISSION_ERRORS[code], params)}`);
  }
}
