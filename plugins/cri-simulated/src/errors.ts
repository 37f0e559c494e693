import { formatMessage } from '@skiff/kernel';

/** Every simulated-runtime error: a stable code, the CRI-ish status it stands for and a message template. */
export const RUNTIME_ERRORS = Object.freeze({
  SKIFF_ERR_CRI_NOT_FOUND: { grpc: 'NotFound', message: '{kind} "{id}" not found' },
  SKIFF_ERR_CRI_STATE: { grpc: 'FailedPrecondition', message: '{kind} "{id}" is {state}: {detail}' },
  SKIFF_ERR_CRI_NAME_RESERVED: { grpc: 'AlreadyExists', message: 'the {kind} name "{name}" is reserved for "{id}"' },
  SKIFF_ERR_CRI_IMAGE_NOT_PRESENT: { grpc: 'NotFound', message: 'image "{image}" is not present on the node (pull it first)' },
  SKIFF_ERR_CRI_IMAGE_PULL: { grpc: 'NotFound', message: 'failed to pull and unpack image "{image}": not found' },
  SKIFF_ERR_CRI_CLOSED: { grpc: 'Unavailable', message: 'the runtime is closed' },
} as const);

export type RuntimeErrorCode = keyof typeof RUNTIME_ERRORS;

/**
 * A runtime call that failed. `reason` is what the kubelet shows in the container status for image pulls
 * (ErrImagePull), as Kubernetes does.
 */
export class RuntimeError extends Error {
  readonly grpcCode: string;
  readonly reason?: string;

  constructor(
    readonly code: RuntimeErrorCode,
    params: Record<string, string>,
    reason?: string,
  ) {
    const entry = RUNTIME_ERRORS[code];
    super(`rpc error: code = ${entry.grpc} desc = ${formatMessage(entry.message, params)}`);
    this.name = 'RuntimeError';
    this.grpcCode = entry.grpc;
    this.reason = reason;
  }
}
