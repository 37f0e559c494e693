import { codedError } from '@skiff/kernel';

/**
 * Every disruption-controller error: a stable code and a message template. The message is what a budget's
 * `DisruptionAllowed` condition shows (reason `SyncFailed`) when its status cannot be computed.
 */
export const DISRUPTION_ERRORS = Object.freeze({
  SKIFF_ERR_DISRUPTION_NO_CONTROLLER: 'found no controllers for pod "{pod}"',
  SKIFF_ERR_DISRUPTION_NOT_A_PERCENTAGE: 'invalid value for IntOrString: invalid type: string is not a percentage ({value})',
  SKIFF_ERR_DISRUPTION_UNKNOWN_KIND: 'no matches for kind "{kind}" in version "{apiVersion}"',
  SKIFF_ERR_DISRUPTION_NO_SCALE: '{resource} does not implement the scale subresource',
} as const);

export type DisruptionErrorCode = keyof typeof DISRUPTION_ERRORS;

export class DisruptionError extends codedError('DisruptionError', DISRUPTION_ERRORS) {}
