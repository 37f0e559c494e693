import { AdmissionError, formatMessage } from '@skiff/kernel';

/**
 * The plugin's refusals: a stable code and the message, as kube-apiserver words it after `<resource> "<name>" is
 * forbidden: `.
 */
export const PRIORITY_ADMISSION_ERRORS = Object.freeze({
  SKIFF_ERR_PRIORITY_CLASS_NOT_FOUND: 'no PriorityClass with name {name} was found',
  SKIFF_ERR_PRIORITY_MISMATCH:
    'the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {computed} from the given PriorityClass name',
  SKIFF_ERR_PRIORITY_PREEMPTION_MISMATCH:
    'the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {computed} from the given PriorityClass name',
  SKIFF_ERR_PRIORITY_SECOND_DEFAULT: 'PriorityClass {name} is already marked as default. Only one default can exist',
  SKIFF_ERR_PRIORITY_SYSTEM_CLASS_DELETE: 'this is a system priority class and cannot be deleted',
} as const);

export type PriorityAdmissionErrorCode = keyof typeof PRIORITY_ADMISSION_ERRORS;

/**
 * A refusal as a 403: `pods "web" is forbidden: no PriorityClass with name gold was found`, with its code. A pod
 * with only a generateName is named by it (`pods "web-" is forbidden: …`), as kube-apiserver's admission names it.
 */
export class PriorityAdmissionError extends AdmissionError {
  constructor(
    subject: { resource: string; name: string },
    readonly code: PriorityAdmissionErrorCode,
    params: Record<string, string | number> = {},
  ) {
    super(`${subject.resource} "${subject.name}" is forbidden: ${formatMessage(PRIORITY_ADMISSION_ERRORS[code], params)}`);
  }
}
