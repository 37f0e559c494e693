// The CEL layer of CRD validation, for other plugins that evaluate CEL (admission policies): compiling over
// variables without a schema, the rule library with every call metered, the cost meter and upstream's limits,
// and JSON-to-CEL conversion. `@skiff/plugin-apiextensions/cel`.
import { toCel, type ConversionCache } from './schema/cel/values.js';

export { compileDynamicExpression } from './schema/cel/compile.js';
export { COST_LIMIT_EXCEEDED, CostMeter, meter, PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET, withMeter } from './schema/cel/cost.js';
export { ruleLibraryWith, type RuleLibrary } from './schema/cel/library.js';
export { celGoError } from './schema/cel/validate.js';

export type { ConversionCache };

/** A JSON value as CEL sees it without a schema (whole numbers as int); `cache` shares conversions within one evaluation. */
export function jsonToCel(value: unknown, cache: ConversionCache = new WeakMap()): unknown {
  return toCel(value, undefined, cache);
}
