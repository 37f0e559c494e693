// The public face of validation: kind validators, the building blocks admission plugins and the API
// server's kinds reuse, field-error constructors and the Go printing of the values they report. Path
// helpers stay internal.
import { duplicate, forbidden, invalid, notFound, notSupported, required, tooLong, tooMany } from './field.js';

/** Field-error constructors producing Kubernetes' causes: `fieldErrors.invalid('spec.replicas', -1, '…')`. */
export const fieldErrors = Object.freeze({ invalid, required, notSupported, duplicate, forbidden, notFound, tooLong, tooMany });
export { CAUSE_TYPE, GoLiteral, goStringMap, validateNonnegative, validatePositive } from './field.js';
export {
  isDNS1123Label,
  isDNS1123Subdomain,
  isEnvVarName,
  isQualifiedName,
  isValidCIDR,
  isValidLabelValue,
  isValidPercent,
  isValidPortName,
  isValidPortNumber,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  type NameValidator,
} from './names.js';
export { semanticEqual } from './equality.js';
export {
  TOTAL_ANNOTATION_SIZE_LIMIT,
  validateAnnotations,
  validateFinalizers,
  validateImmutable,
  validateLabels,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validateOwnerReferences,
  validateQualifiedName,
  type ObjectMetaRules,
} from './meta.js';
export { goLabelSelector, isEmptySelector, validateLabelSelector } from './selector.js';
export { validateResourceRequirements } from './resources.js';
export { TAINT_EFFECTS, validateTaintEffect, validateTolerations } from './tolerations.js';
export { validatePodCreate, validatePodSpec, validatePodTemplateSpec } from './pod.js';
export { POD_UPDATE_FORBIDDEN_MESSAGE, validatePod, validatePodUpdate } from './pod-update.js';
