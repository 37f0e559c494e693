import { codedError } from '@skiff/kernel';

/** Every host-path storage error: a stable code and a message template. */
export const STORAGE_ERRORS = Object.freeze({
  SKIFF_ERR_STORAGE_DIRECTORY: 'could not {action} the volume directory {path}: {detail}',
  SKIFF_ERR_STORAGE_OUTSIDE_ROOT: 'refusing to touch {path}: it is not inside the volumes folder {root}',
} as const);

export type StorageErrorCode = keyof typeof STORAGE_ERRORS;

export class StorageError extends codedError('StorageError', STORAGE_ERRORS) {}
