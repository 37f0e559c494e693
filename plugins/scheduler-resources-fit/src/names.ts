export const PLUGIN_NAME = '@skiff/plugin-scheduler-resources-fit';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same filter). */
export const NODE_RESOURCES_FIT = 'NodeResourcesFit';
