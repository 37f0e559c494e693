export type { ResourceDefinition, ScaleDefinition, TableColumn, VersionConversion } from './definition.js';
export {
  AGE_COLUMN,
  ALL_VERBS,
  defineKind,
  pathSegmentErrors,
  restoreField,
  selectorString,
  splitSpecAndStatus,
  STATUS_ONLY_METADATA,
  type ColumnSpec,
  type KindSpec,
  type KindStrategy,
  type NameRule,
} from './define-kind.js';
export { parseJsonPath, readJsonPath, writeJsonPath } from './json-path.js';
export { validateAgainstSchema } from './schema-validation.js';
