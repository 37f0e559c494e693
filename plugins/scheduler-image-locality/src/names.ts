export const PLUGIN_NAME = '@skiff/plugin-scheduler-image-locality';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same score). */
export const IMAGE_LOCALITY = 'ImageLocality';
