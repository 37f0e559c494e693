import { codedError } from '@skiff/kernel';

/** Every controller-manager error: a stable code and a message template. */
export const CONTROLLER_MANAGER_ERRORS = Object.freeze({
  SKIFF_ERR_CONTROLLER_INVALID: 'a controller registration is invalid: {detail}',
  SKIFF_ERR_CONTROLLER_DUPLICATE: 'controller "{name}" is registered twice',
  SKIFF_ERR_CONTROLLER_UNKNOWN: 'option "enabled" names controller "{name}", which no plugin registered (known: {known})',
  SKIFF_ERR_CONTROLLER_START: 'controller "{name}"{from} failed to start: {detail}',
} as const);

export type ControllerManagerErrorCode = keyof typeof CONTROLLER_MANAGER_ERRORS;

export class ControllerManagerError extends codedError('ControllerManagerError', CONTROLLER_MANAGER_ERRORS) {}
