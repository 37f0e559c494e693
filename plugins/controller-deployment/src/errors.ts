/** Every deployment-controller error: a stable code and a message template. */
export const DEPLOYMENT_ERRORS = Object.freeze({
  SKIFF_ERR_DEPLOYMENT_INT_OR_PERCENT: '{field} must be an integer or a percentage such as "25%" (got {value})',
} as const);

export type DeploymentErrorCode = keyof typeof DEPLOYMENT_ERRORS;

export class DeploymentError extends Error {
  constructor(
    readonly code: DeploymentErrorCode,
    params: Record<string, string>,
  ) {
    super(DEPLOYMENT_ERRORS[code].replace(/\{(\w+)\}/g, (_, key: string) => params[key] ?? `{${key}}`));
    this.name = 'DeploymentError';
  }
}
