export const PLUGIN_NAME = '@skiff/plugin-controller-serviceaccount';
/** The name `enabled` in the controller manager's options refers to (kube-controller-manager's `serviceaccount`). */
export const CONTROLLER_NAME = 'serviceaccount';

/** The ServiceAccount every namespace gets unless the plugin's options name others. */
export const DEFAULT_SERVICE_ACCOUNT = 'default';
