export { FieldSet, fieldSetOf, formatFieldPath, valueAtPath } from './field-set.js';
export { applyConflictError, applyWithManagedFields, recordUpdate, type ApplyConflict, type ManagedWrite } from './managers.js';
export { undeclaredFields } from './declared-fields.js';
