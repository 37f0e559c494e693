export const PLUGIN_NAME = '@skiff/plugin-controller-resource-quota';

/** The controller's name, as kube-controller-manager's `--controllers` calls it. */
export const CONTROLLER_NAME = 'resourcequota';
