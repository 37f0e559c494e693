import { codedError } from '@skiff/kernel';

/** Every DaemonSet-controller error: a stable code and a message template. */
export const DAEMONSET_ERRORS = Object.freeze({
  SKIFF_ERR_DAEMONSET_INT_OR_PERCENT: '{field} must be an integer or a percentage such as "25%" (got {value})',
  SKIFF_ERR_DAEMONSET_HASH_COLLISION: 'ControllerRevision {name} exists with another template: collisionCount raised to {count}, retrying',
  SKIFF_ERR_DAEMONSET_FAILED_PODS: 'deleted {count} failed pods of DaemonSet {key}',
} as const);

export type DaemonSetErrorCode = keyof typeof DAEMONSET_ERRORS;

export class DaemonSetError extends codedError('DaemonSetError', DAEMONSET_ERRORS) {}
