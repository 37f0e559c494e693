import { codedError } from '@skiff/kernel';

/** Every kubelet error: a stable code and a message template. */
export const KUBELET_ERRORS = Object.freeze({
  SKIFF_ERR_KUBELET_RUNTIME_UNKNOWN: 'container runtime "{name}" is not registered (known: {known})',
  SKIFF_ERR_KUBELET_NETWORK_UNKNOWN: 'pod network "{name}" is not registered (known: {known})',
  SKIFF_ERR_KUBELET_DUPLICATE: '{kind} "{name}" is registered twice',
  SKIFF_ERR_KUBELET_NETWORK_NO_IP: 'pod network "{name}" returned no IP address for {pod}',
  SKIFF_ERR_KUBELET_RUNTIME_FAILED: 'container runtime "{name}"{from} failed in {method}: {detail}',
  SKIFF_ERR_KUBELET_NETWORK_FAILED: 'pod network "{name}"{from} failed in {method}: {detail}',
} as const);

export type KubeletErrorCode = keyof typeof KUBELET_ERRORS;

export class KubeletError extends codedError('KubeletError', KUBELET_ERRORS) {}
