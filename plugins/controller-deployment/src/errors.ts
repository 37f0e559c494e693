import { codedError } from '@skiff/kernel';

/** Every deployment-controller error: a stable code and a message template. */
export const DEPLOYMENT_ERRORS = Object.freeze({
  SKIFF_ERR_DEPLOYMENT_INT_OR_PERCENT: '{field} must be an integer or a percentage such as "25%" (got {value})',
} as const);

export type DeploymentErrorCode = keyof typeof DEPLOYMENT_ERRORS;

export class DeploymentError extends codedError('DeploymentError', DEPLOYMENT_ERRORS) {}
