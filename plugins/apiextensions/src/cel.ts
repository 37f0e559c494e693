// The CEL layer of CRD validation, for other plugins that evaluate CEL (admission policies): compiling over
// variables without a schema, the rule library with every call metered, the cost meter and upstream's limits,
// and JSON-to-CEL conversion. `@skiff/plugin-apiextensions/cel`.
export { compileDynamicExpression } from './schema/cel/compile.js';
export { COST_LIMIT_EXCEEDED, CostMeter, meter, PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET, withMeter } from './schema/cel/cost.js';
export { ruleLibraryWith, type RuleLibrary } from './schema/cel/library.js';
export { celGoError } from './schema/cel/validate.js';
export { toCel, type ConversionCache } from './schema/cel/values.js';
