export const PLUGIN_NAME = '@skiff/plugin-controller-service-lb';
/** The name `enabled` in the controller manager's options refers to. */
export const CONTROLLER_NAME = 'service-lb';

/** Nodes with this label are left out of load balancers (the well-known label). */
export const EXCLUDE_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';
