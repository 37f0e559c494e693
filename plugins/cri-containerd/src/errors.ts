import { codedError } from '@skiff/kernel';

/** Every error of the containerd runtime plugin: a stable code and a message template. */
export const CONTAINERD_ERRORS = Object.freeze({
  SKIFF_ERR_CONTAINERD_NOT_ROOT:
    'the containerd runtime needs root (it mounts filesystems and makes namespaces); run as root, or use the dev preset (simulated containers)',
  SKIFF_ERR_CONTAINERD_MISSING:
    '{binary} was not found: install containerd, runc and the CNI plugins (bash scripts/install-system-deps.sh), or use the dev preset (simulated containers)',
  SKIFF_ERR_CONTAINERD_NO_OVERLAYFS:
    'this kernel has no overlayfs (containerd unpacks images onto it): load the overlay module, or use the dev preset (simulated containers)',
  SKIFF_ERR_CONTAINERD_START: 'containerd did not start: {detail}',
  SKIFF_ERR_CONTAINERD_CALL: '{method}: {detail}',
  SKIFF_ERR_CONTAINERD_IMPORT: 'importing {file} failed: {detail}',
} as const);

export type ContainerdErrorCode = keyof typeof CONTAINERD_ERRORS;

export class ContainerdError extends codedError('ContainerdError', CONTAINERD_ERRORS) {}
