import type { Status } from '@skiff/api';
import { codedError } from '@skiff/kernel';

/** Every kubelet error: a stable code and a message template. */
export const KUBELET_ERRORS = Object.freeze({
  SKIFF_ERR_KUBELET_CSR_REFUSED: 'certificate signing request {name} was {how}: {reason} {message}',
  SKIFF_ERR_KUBELET_CSR_TIMEOUT:
    'certificate signing request {name} got no certificate within {seconds}s (approve it with `kubectl certificate approve {name}`, or check that the control plane runs @skiff/plugin-controller-csr)',
  SKIFF_ERR_KUBELET_NO_POD_CIDR:
    'node {node} got no pod range from the cluster within {seconds}s: the control plane needs the node IPAM controller (@skiff/plugin-controller-node-ipam)',
  SKIFF_ERR_KUBELET_RUNTIME_UNKNOWN: 'container runtime "{name}" is not registered (known: {known})',
  SKIFF_ERR_KUBELET_NETWORK_UNKNOWN: 'pod network "{name}" is not registered (known: {known})',
  SKIFF_ERR_KUBELET_SERVICE_PROXY_UNKNOWN: 'service proxy "{name}" is not registered (known: {known})',
  SKIFF_ERR_KUBELET_DUPLICATE: '{kind} "{name}" is registered twice',
  SKIFF_ERR_KUBELET_NETWORK_NO_IP: 'pod network "{name}" returned no IP address for {pod}',
  SKIFF_ERR_KUBELET_RUNTIME_FAILED: 'container runtime "{name}"{from} failed in {method}: {detail}',
  SKIFF_ERR_KUBELET_NETWORK_FAILED: 'pod network "{name}"{from} failed in {method}: {detail}',
  SKIFF_ERR_KUBELET_SERVICE_PROXY_FAILED: 'service proxy "{name}"{from} failed in {method}: {detail}',
  SKIFF_ERR_KUBELET_POD_NOT_FOUND: 'pod "{pod}" (uid {uid}) is not on node "{node}"',
  SKIFF_ERR_KUBELET_CONTAINER_WAITING: 'container "{container}" in pod "{pod}" is waiting to start: {reason}',
  SKIFF_ERR_KUBELET_CONTAINER_TERMINATED: 'container "{container}" in pod "{pod}" is terminated',
  SKIFF_ERR_KUBELET_PREVIOUS_NOT_FOUND: 'previous terminated container "{container}" in pod "{pod}" not found',
  SKIFF_ERR_KUBELET_CONTAINER_NOT_FOUND: 'container not found ("{container}")',
  SKIFF_ERR_KUBELET_CONTAINER_NOT_RUNNING: 'container "{container}" in pod "{pod}" is not running ({state})',
  SKIFF_ERR_KUBELET_NO_LOG: 'container "{container}" in pod "{pod}" has no log file: container runtime "{runtime}" does not keep one',
  SKIFF_ERR_KUBELET_LOG_READ: 'failed to read the log of container "{container}" in pod "{pod}": {detail}',
  SKIFF_ERR_KUBELET_STREAMING_UNSUPPORTED: 'container runtime "{runtime}" does not support {kind}',
} as const);

export type KubeletErrorCode = keyof typeof KUBELET_ERRORS;

/**
 * The errors a node connection (pod logs, exec, attach, port-forward) throws, as the API server answers them:
 * the HTTP status and Kubernetes `reason` of the Status object. Upstream's kubelet answers the container
 * states with 400 (kubectl: `Error from server (BadRequest): container "c" in pod "p" is waiting to start: …`).
 */
export const KUBELET_ERROR_STATUS: Readonly<Partial<Record<KubeletErrorCode, { status: number; reason: string }>>> = Object.freeze({
  SKIFF_ERR_KUBELET_POD_NOT_FOUND: { status: 404, reason: 'NotFound' },
  SKIFF_ERR_KUBELET_CONTAINER_WAITING: { status: 400, reason: 'BadRequest' },
  SKIFF_ERR_KUBELET_CONTAINER_TERMINATED: { status: 400, reason: 'BadRequest' },
  SKIFF_ERR_KUBELET_PREVIOUS_NOT_FOUND: { status: 400, reason: 'BadRequest' },
  SKIFF_ERR_KUBELET_CONTAINER_NOT_FOUND: { status: 404, reason: 'NotFound' },
  SKIFF_ERR_KUBELET_CONTAINER_NOT_RUNNING: { status: 400, reason: 'BadRequest' },
  SKIFF_ERR_KUBELET_NO_LOG: { status: 400, reason: 'BadRequest' },
  SKIFF_ERR_KUBELET_LOG_READ: { status: 500, reason: 'InternalError' },
  SKIFF_ERR_KUBELET_STREAMING_UNSUPPORTED: { status: 400, reason: 'BadRequest' },
});

/** Whether a caught value is a failed system call with this code (`ENOENT`…). */
export function hasErrnoCode(err: unknown, code: string): boolean {
  return err instanceof Error && 'code' in err && err.code === code;
}

export class KubeletError extends codedError('KubeletError', KUBELET_ERRORS) {
  /** How the API server answers with this error: a Kubernetes Status (500 InternalError unless the table above says otherwise). */
  toStatus(): Status {
    const { status, reason } = KUBELET_ERROR_STATUS[this.code] ?? { status: 500, reason: 'InternalError' };
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason, code: status };
  }
}
