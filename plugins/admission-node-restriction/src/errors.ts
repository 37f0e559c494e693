import { AdmissionError, formatMessage, type AdmissionRequest } from '@skiff/kernel';

/** Every refusal, with a stable code; the message is what kube-apiserver says after `<resource> "<name>" is forbidden: `. */
export const NODE_RESTRICTION_ERRORS = Object.freeze({
  SKIFF_ERR_NODE_RESTRICTION_UNKNOWN_NODE: 'could not determine node from user "{user}"',
  SKIFF_ERR_NODE_RESTRICTION_OTHER_NODE: 'node "{node}" is not allowed to modify node "{name}"',
  SKIFF_ERR_NODE_RESTRICTION_SET_LABELS: 'node "{node}" is not allowed to set the following labels: {labels}',
  SKIFF_ERR_NODE_RESTRICTION_MODIFY_LABELS: 'is not allowed to modify labels: {labels}',
  SKIFF_ERR_NODE_RESTRICTION_TAINTS: 'node "{node}" is not allowed to modify taints',
  SKIFF_ERR_NODE_RESTRICTION_POD_OPERATION: 'unexpected operation "{operation}", node "{node}" can only create and delete mirror pods',
  SKIFF_ERR_NODE_RESTRICTION_NOT_MIRROR: 'pod does not have "kubernetes.io/config.mirror" annotation, node "{node}" can only create mirror pods',
  SKIFF_ERR_NODE_RESTRICTION_POD_NODE_NAME: 'node "{node}" can only create pods with spec.nodeName set to itself',
  SKIFF_ERR_NODE_RESTRICTION_POD_OWNERS: 'node "{node}" can only create pods with a single owner reference set to itself',
  SKIFF_ERR_NODE_RESTRICTION_POD_OWNER: 'node "{node}" can only create pods with an owner reference set to itself',
  SKIFF_ERR_NODE_RESTRICTION_POD_CONTROLLER: 'node "{node}" can only create pods with a controller owner reference set to itself',
  SKIFF_ERR_NODE_RESTRICTION_POD_BLOCK_OWNER_DELETION: 'node "{node}" must not set blockOwnerDeletion on an owner reference',
  SKIFF_ERR_NODE_RESTRICTION_POD_OWNER_UID: 'node {node} UID mismatch: expected {expected} got {got}',
  SKIFF_ERR_NODE_RESTRICTION_POD_REFERENCES: 'node "{node}" can not create pods that reference {what}',
  SKIFF_ERR_NODE_RESTRICTION_POD_DELETE: 'node "{node}" can only delete pods with spec.nodeName set to itself',
  SKIFF_ERR_NODE_RESTRICTION_POD_STATUS: 'node "{node}" can only update pod status for pods with spec.nodeName set to itself',
  SKIFF_ERR_NODE_RESTRICTION_POD_STATUS_LABELS: 'node "{node}" cannot update labels through pod status',
  SKIFF_ERR_NODE_RESTRICTION_POD_SUBRESOURCE: `unexpected pod subresource "{subresource}", only 'status' and 'eviction' are allowed`,
  SKIFF_ERR_NODE_RESTRICTION_OPERATION: 'unexpected operation {operation}',
  SKIFF_ERR_NODE_RESTRICTION_EVICTION: 'node {node} can only evict pods with spec.nodeName set to itself',
  SKIFF_ERR_NODE_RESTRICTION_PVC: 'may only update PVC status',
  SKIFF_ERR_NODE_RESTRICTION_PVC_STATUS: 'node "{node}" is not allowed to update fields other than status.capacity and status.conditions: {fields}',
  SKIFF_ERR_NODE_RESTRICTION_TOKEN_UNBOUND: 'node requested token not bound to a pod',
  SKIFF_ERR_NODE_RESTRICTION_TOKEN_NO_UID: 'node requested token with a pod binding without a uid',
  SKIFF_ERR_NODE_RESTRICTION_TOKEN_UID:
    'the UID in the bound object reference ({uid}) does not match the UID in record. The object might have been deleted and then recreated',
  SKIFF_ERR_NODE_RESTRICTION_TOKEN_OTHER_NODE: 'node requested token bound to a pod scheduled on a different node',
  SKIFF_ERR_NODE_RESTRICTION_LEASE_NAMESPACE: 'can only access leases in the "kube-node-lease" system namespace',
  SKIFF_ERR_NODE_RESTRICTION_LEASE_NAME: 'can only access node lease with the same name as the requesting node',
  SKIFF_ERR_NODE_RESTRICTION_CSINODE: 'can only access CSINode with the same name as the requesting node',
} as const);

export type NodeRestrictionErrorCode = keyof typeof NODE_RESTRICTION_ERRORS;

/**
 * A refusal as a 403 naming the object the way kube-apiserver's admission does: its resource (`leases.coordination.k8s.io`),
 * then its name, or a pod's generateName, or `Unknown`.
 */
export class NodeRestrictionError extends AdmissionError {
  constructor(
    request: Pick<AdmissionRequest, 'resource' | 'name' | 'object'>,
    readonly code: NodeRestrictionErrorCode,
    params: Record<string, string | number> = {},
  ) {
    const resource = request.resource.group ? `${request.resource.resource}.${request.resource.group}` : request.resource.resource;
    const name = request.name || request.object?.metadata?.name || request.object?.metadata?.generateName || 'Unknown';
    super(`${resource} "${name}" is forbidden: ${formatMessage(NODE_RESTRICTION_ERRORS[code], params)}`);
  }
}
