import { AdmissionError, formatMessage } from '@skiff/kernel';

/**
 * The plugin's refusals: a stable code and the message, as kube-apiserver words it after `<resource> "<name>" is
 * forbidden: `.
 */
export const RUNTIME_CLASS_ADMISSION_ERRORS = Object.freeze({
  SKIFF_ERR_RUNTIME_CLASS_NOT_FOUND: 'pod rejected: RuntimeClass "{name}" not found',
  SKIFF_ERR_RUNTIME_CLASS_OVERHEAD_MISMATCH: "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
  SKIFF_ERR_RUNTIME_CLASS_OVERHEAD_WITHOUT_CLASS: 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead',
  SKIFF_ERR_RUNTIME_CLASS_NODE_SELECTOR_CONFLICT:
    'conflict: runtimeClass.scheduling.nodeSelector[{key}] = {classValue}; pod.spec.nodeSelector[{key}] = {podValue}',
} as const);

export type RuntimeClassAdmissionErrorCode = keyof typeof RUNTIME_CLASS_ADMISSION_ERRORS;

/** A refusal as a 403 (`pods "web" is forbidden: pod rejected: RuntimeClass "kata" not found`), with its code. */
export class RuntimeClassAdmissionError extends AdmissionError {
  constructor(
    subject: { resource: string; name: string },
    readonly code: RuntimeClassAdmissionErrorCode,
    params: Record<string, string | number> = {},
  ) {
    super(`${subject.resource} "${subject.name}" is forbidden: ${formatMessage(RUNTIME_CLASS_ADMISSION_ERRORS[code], params)}`);
  }
}
