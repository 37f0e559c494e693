import { codedError } from '@skiff/kernel';

/** Every ImageLocality error: a stable code and a message template. */
export const IMAGE_LOCALITY_ERRORS = Object.freeze({
  SKIFF_ERR_IMAGE_LOCALITY_NO_SNAPSHOT: 'scoring pod {pod}: no snapshot (PreScore did not run and the plugin was not initialised)',
} as const);

export type ImageLocalityErrorCode = keyof typeof IMAGE_LOCALITY_ERRORS;

export class ImageLocalityError extends codedError('ImageLocalityError', IMAGE_LOCALITY_ERRORS) {}
