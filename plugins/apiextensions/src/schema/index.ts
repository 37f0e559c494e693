// The structural-schema engine of CustomResourceDefinitions: checking a CRD version's schema, and pruning,
// defaulting and validating (OpenAPI keywords, list types, CEL rules) the custom resources it describes.
export { checkSchema, type CheckOptions } from './check.js';
export { compileSchema } from './compile.js';
export { DEFAULT_CEL_BUDGET } from './types.js';
export type { CompileOptions, CompiledSchema, JSONSchemaProps } from './types.js';
