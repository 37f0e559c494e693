export const PLUGIN_NAME = '@skiff/plugin-scheduler-default-binder';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same bind). */
export const DEFAULT_BINDER = 'DefaultBinder';
