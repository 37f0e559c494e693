export const PLUGIN_NAME = '@skiff/plugin-controller-node-ipam';
/** The name `enabled` in the controller manager's options refers to (kube-controller-manager's `nodeipam`). */
export const CONTROLLER_NAME = 'nodeipam';

/** The event reasons upstream's range allocator records on a node. */
export const EVENT_REASONS = Object.freeze({
  CIDR_NOT_AVAILABLE: 'CIDRNotAvailable',
  CIDR_ASSIGNMENT_FAILED: 'CIDRAssignmentFailed',
});
